import type pg from 'pg'
import { activity } from './activity.js'
import { call, clientErrors, fivexx, latency, obj, totals } from './calls.js'
import { readLogs, shorten } from './logs.js'
import { received, trackingUrls } from './peers.js'
import { type Proc } from './processes.js'
import { SEED } from './random.js'
import { BULK_CONCURRENCY, DB, LOOPS, PORT_ALL, SECONDS, SETTLE_SECONDS } from './settings.js'

/** Every campaign of the account, through the API (pages of 100). */
export async function allCampaigns(): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = []
  for (let page = 1; page < 100; page++) {
    const r = await call('report', 'GET', `/campaigns?per_page=100&page=${page}`, undefined, {
      port: PORT_ALL,
    })
    if (r.status !== 200 || !Array.isArray(r.body)) {
      console.log(`  GET /campaigns page ${page}: ${r.status} ${r.text.slice(0, 200)}`)
      break
    }
    out.push(...(r.body as Record<string, unknown>[]))
    if ((r.body as unknown[]).length < 100) break
  }
  return out
}

/** The report after the traffic and the settle wait. */
export async function printReport(client: pg.Client, procs: Proc[], open: { id: number; status: number }[]) {
  const line = (s = '') => console.log(s)
  line()
  line('================================ REPORT ================================')
  line(
    `database ${DB}, seed ${SEED}, ${LOOPS} loops x ${SECONDS} s, DB_POOL_SIZE=${process.env.DB_POOL_SIZE ?? 'default'}, bulk cap ${BULK_CONCURRENCY || 'none'}`,
  )
  line()
  line('--- totals per call kind and status (avg/max ms, >5s) ---')
  for (const [kind, m] of [...totals.entries()].sort()) {
    const l = latency.get(kind)!
    const st = [...m.entries()]
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])))
      .map(([s, n]) => `${s}:${n}`)
      .join(' ')
    line(
      `  ${kind.padEnd(26)} ${st.padEnd(40)} avg ${Math.round(l.sum / l.n)} max ${l.max}${l.slow ? ` slow ${l.slow}` : ''}`,
    )
  }
  line()
  line('--- one example body per call kind and 4xx status (expected validation answers?) ---')
  for (const [k, b] of [...clientErrors.entries()].sort()) line(`  ${k.padEnd(30)} ${b}`)
  line()
  line('--- 5xx / timeouts / network errors (deduplicated by path pattern + body) ---')
  if (!fivexx.size) line('  none')
  for (const f of [...fivexx.values()].sort((a, b) => b.count - a.count)) {
    line(`  ${f.count}x ${f.method} ${f.pattern} -> ${f.status}  [kinds: ${[...f.kinds].join(', ')}]`)
    line(`     body: ${f.body}`)
    line(`     e.g.: ${f.example}`)
  }
  line()
  line('--- error-level log lines (level >= 50), grouped by msg ---')
  const logs = readLogs(procs)
  if (!logs.groups.size) line('  none')
  for (const [key, g] of [...logs.groups.entries()].sort((a, b) => b[1].count - a[1].count)) {
    const err = obj(g.example.err)
    line(`  ${g.count}x "${key}"  [${[...g.procs.entries()].map(([p, n]) => `${p}:${n}`).join(' ')}]`)
    line(
      `     err.message: ${shorten(String(err.message ?? '-'))}  err.code: ${String(err.code ?? '-')}  err.type: ${String(err.type ?? '-')}`,
    )
    if (err.query) line(`     err.query: ${shorten(String(err.query).replace(/\s+/g, ' '), 200)}`)
    const extra = Object.fromEntries(
      Object.entries(g.example).filter(
        ([k]) => !['level', 'time', 'pid', 'hostname', 'msg', 'err'].includes(k),
      ),
    )
    if (Object.keys(extra).length) line(`     fields: ${JSON.stringify(extra).slice(0, 400)}`)
    if (err.stack) {
      const frames = String(err.stack)
        .split('\n')
        .filter((l) => /^\s+at /.test(l))
        .slice(0, 8)
      line(`     stack:\n        ${frames.map((f) => f.trim()).join('\n        ')}`)
    }
  }
  if (logs.nonJson.length) {
    line(`  non-JSON output lines: ${logs.nonJson.length}; first ones:`)
    for (const n of logs.nonJson.slice(0, 15)) line(`     [${n.proc}] ${n.line}`)
  }
  line(
    `  (warn-level lines: ${logs.warns}: ${[...logs.warnGroups.entries()]
      .map(([m, n]) => `${n}x "${m}"`)
      .join('; ')
      .slice(0, 800)})`,
  )
  line()
  line('--- campaigns ---')
  const camps = await allCampaigns()
  const byStatus = new Map<unknown, number>()
  for (const c of camps) byStatus.set(c.status, (byStatus.get(c.status) ?? 0) + 1)
  line(
    `  ${camps.length} campaigns; by status: ${[...byStatus.entries()].map(([s, n]) => `${s}:${n}`).join(' ')}`,
  )
  const errored = camps.filter((c) => c.error)
  const codes = new Map<string, number>()
  for (const c of errored) {
    const e = obj(c.error)
    codes.set(String(e.code), (codes.get(String(e.code)) ?? 0) + 1)
  }
  line(
    `  errored: ${errored.length}; by code: ${[...codes.entries()].map(([c, n]) => `${c}:${n}`).join(' ') || '-'}`,
  )
  for (const c of errored) {
    const e = obj(c.error)
    line(
      `   ${e.code === 'internal' ? '!!' : '  '} campaign ${c.id} status ${c.status}: ${e.code}: ${String(e.message).slice(0, 200)}`,
    )
  }
  if (open.length)
    line(
      `  STUCK after ${SETTLE_SECONDS} s settle (status 1/2, not paused): ${open.map((o) => `${o.id}(status ${o.status})`).join(', ')}`,
    )
  else line('  none stuck in status 1/2 (unpaused) after the settle wait')
  const overdue = (
    await client.query(
      `SELECT id, scheduled_at FROM campaigns WHERE status = 7 AND scheduled_at < now() - interval '30 seconds'`,
    )
  ).rows
  if (overdue.length)
    line(
      `  OVERDUE scheduled (status 7, due > 30 s ago): ${overdue.map((o) => `${o.id}@${o.scheduled_at.toISOString()}`).join(', ')}`,
    )
  const ledger = (
    await client.query(
      `SELECT kind, status, count(*)::int AS n, count(*) FILTER (WHERE status = 4 AND claimed_until < now())::int AS expired
       FROM messages GROUP BY kind, status ORDER BY kind, status`,
    )
  ).rows
  line(
    `  message ledger (kind/status: n): ${ledger.map((r) => `${r.kind}/${r.status}:${r.n}${r.expired ? `(claim lease expired ${r.expired})` : ''}`).join(' ')}`,
  )
  line()
  line('--- database activity samples (every 3 s during the traffic) ---')
  line(
    `  ${activity.samples} samples; max active sessions ${activity.maxActive}; max waiting on locks ${activity.maxWaitingOnLocks}`,
  )
  line(
    `  session-samples by state/wait: ${[...activity.waits.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k}=${n}`)
      .join(', ')}`,
  )
  line('  heads of lock queues (blocking others, not waiting on a lock), per sample:')
  for (const [k, e] of [...activity.heads.entries()].sort((a, b) => b[1].n - a[1].n).slice(0, 10))
    line(`    ${e.n}x (max xact ${e.maxXactSecs}s, max ${e.blocked} waiting on it): ${k}`)
  const seen = new Set<string>()
  for (const l of activity.longest) {
    if (seen.has(l.query)) continue
    seen.add(l.query)
    line(`  running ${l.secs}s (${l.wait}): ${l.query}`)
  }
  const after = (
    await client.query(
      `SELECT state, coalesce(wait_event_type || ':' || wait_event, '-') AS wait,
              extract(epoch FROM now() - query_start)::int AS secs, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) AS query
       FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`,
    )
  ).rows
  line(`  non-idle sessions after the settle wait: ${after.length}`)
  for (const r of after) line(`    ${r.state} ${r.wait} ${r.secs}s: ${r.query}`)
  line()
  line('--- received ---')
  line(`  mails at the sink: ${received.mails}; RCPT refused (gone*): ${received.rcptRefused}`)
  line(
    `  account webhook calls: ${received.hooks} (${received.hookBodies} bytes); pipeline webhook-node calls: ${received.pipelineHooks}`,
  )
  line(`  tracking URLs collected: ${trackingUrls.length}`)
  for (const p of procs)
    if (p.exited) line(`  PROCESS ${p.name} EXITED during the run: ${JSON.stringify(p.exited)}`)
  line(`  logs: ${procs.map((p) => p.logFile).join(' ')}`)
  line('========================================================================')
}
