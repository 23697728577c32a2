/**
 * Race / stress script: several Tidings processes (ROLE=all, api, worker) on one fresh PostgreSQL database, 24
 * concurrent client loops over a small shared pool of ids and addresses, then a report of every 5xx, every
 * error-level log line, every errored (and stuck) campaign, mail received at an in-process SMTP sink and webhook
 * calls received.
 *
 *   npm run race   (builds dist/, then runs this)
 *
 * It looks for what only concurrency shows: deadlocks that outlast their retries, lost updates that break a
 * constraint, a campaign stopped by a transient error. Not part of `npm test` (it runs for minutes and its
 * traffic is random); its findings become deterministic tests. Talks to 127.0.0.1 only; the server, reached
 * as `psql -h 127.0.0.1 -U postgres` (RACE_PG_USER), must let that user create databases.
 *
 * Env: RACE_SECONDS (default 90), RACE_LOOPS (24), RACE_SETTLE_SECONDS (30: how long to wait after the traffic
 * for campaigns in status 1/2 to finish), DB_POOL_SIZE (passed on to the three server processes when set),
 * RACE_KEEP_DB=1 (do not drop the database), RACE_SEED (random seed), RACE_BULK_CONCURRENCY (at most this many
 * subscribe-bulk calls in flight at once; default 0 = no cap), RACE_FILL (contacts imported into a list no call
 * touches before the traffic, so that plans are those of a real account: with a few hundred contacts PostgreSQL
 * scans and hash-joins, and bulk writes lock in table order rather than in the order they are given).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { sampleActivity } from './race/activity.js'
import { fivexx, record, totals } from './race/calls.js'
import { accountCalls } from './race/ops-account.js'
import { mailCalls } from './race/ops-mail.js'
import { peopleCalls } from './race/ops-people.js'
import { received, startReceiver, startSink } from './race/peers.js'
import { pools } from './race/pools.js'
import { type Proc, startProc, stopProc, waitHttp } from './race/processes.js'
import { SEED, rand, sleep } from './race/random.js'
import { printReport } from './race/report.js'
import {
  BULK_CONCURRENCY,
  DATABASE_URL,
  DB,
  LOOPS,
  PG_HOST,
  PG_USER,
  PORT_ALL,
  PORT_API,
  PORT_WORKER,
  SECONDS,
  SETTLE_SECONDS,
} from './race/settings.js'
import { setup } from './race/setup.js'

async function main() {
  console.log(
    `race: db ${DB}, ${LOOPS} loops, ${SECONDS} s, seed ${SEED}, DB_POOL_SIZE=${process.env.DB_POOL_SIZE ?? '(default)'}`,
  )
  for (const port of [PORT_ALL, PORT_API, PORT_WORKER]) {
    const busy = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) }).then(
      () => true,
      () => false,
    )
    if (busy) throw new Error(`port ${port} is already in use`)
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'race-'))
  execFileSync('psql', ['-h', PG_HOST, '-U', PG_USER, '-d', 'postgres', '-qc', `CREATE DATABASE ${DB}`])
  const sink = await startSink()
  const receiver = await startReceiver()
  console.log(`  temp dir ${dir}, sink :${sink.port}, webhook receiver :${receiver.port}`)
  const procs: Proc[] = []
  let client: pg.Client | undefined
  try {
    const all = startProc('all', 'all', PORT_ALL, dir, sink.port)
    procs.push(all)
    await waitHttp(PORT_ALL, all)
    const api = startProc('api', 'api', PORT_API, dir, sink.port)
    const worker = startProc('worker', 'worker', PORT_WORKER, dir, sink.port)
    procs.push(api, worker)
    await waitHttp(PORT_API, api)
    await sleep(1500) // the worker serves no API; give it a moment to start its loops
    console.log(`  pids: ${procs.map((p) => `${p.name}=${p.child.pid}`).join(' ')}`)
    client = new pg.Client({ connectionString: DATABASE_URL })
    await client.connect()
    await setup(client, receiver.port)
    console.log(
      `  setup: lists ${pools.lists}, templates ${pools.templates}, campaigns ${pools.campaigns}, pipelines ${pools.pipelines}`,
    )

    // Traffic
    const ops = [...peopleCalls(), ...mailCalls(receiver.port), ...accountCalls(receiver.port)]
    const totalWeight = ops.reduce((s, o) => s + o[1], 0)
    const choose = () => {
      let x = rand() * totalWeight
      for (const o of ops) if ((x -= o[1]) < 0) return o
      return ops[ops.length - 1]!
    }
    const started = Date.now()
    const deadline = started + SECONDS * 1000
    let done = 0
    let bulkInFlight = 0
    const sampler = setInterval(() => void sampleActivity(client!), 3000)
    const progress = setInterval(() => {
      const n = [...totals.values()].reduce((s, m) => s + [...m.values()].reduce((a, b) => a + b, 0), 0)
      const bad = [...fivexx.values()].reduce((s, f) => s + f.count, 0)
      console.log(
        `  t+${Math.round((Date.now() - started) / 1000)}s: ${n} requests, ${bad} 5xx/timeouts, ${received.mails} mails, ${received.hooks} webhook calls${procs.some((p) => p.exited) ? ', A PROCESS EXITED' : ''}`,
      )
    }, 15_000)
    await Promise.all(
      Array.from({ length: LOOPS }, async () => {
        while (Date.now() < deadline) {
          let [kind, , fn] = choose()
          while (BULK_CONCURRENCY > 0 && kind === 'subscribe-bulk' && bulkInFlight >= BULK_CONCURRENCY)
            [kind, , fn] = choose()
          if (kind === 'subscribe-bulk') bulkInFlight++
          try {
            await fn()
          } catch (err) {
            record(`${kind} (script exception)`, 'neterr', 0)
            console.log(`  script exception in ${kind}: ${(err as Error).stack}`)
          } finally {
            if (kind === 'subscribe-bulk') bulkInFlight--
          }
          done++
        }
      }),
    )
    clearInterval(progress)
    clearInterval(sampler)
    console.log(`  traffic done after ${Math.round((Date.now() - started) / 1000)} s, ${done} operations`)

    // Settle: campaigns that are preparing/sending (and not paused) should finish.
    const settleDeadline = Date.now() + SETTLE_SECONDS * 1000
    let open: { id: number; status: number }[] = []
    for (;;) {
      open = (
        await client.query(
          'SELECT id, status FROM campaigns WHERE status IN (1, 2) AND paused_at IS NULL ORDER BY id',
        )
      ).rows
      if (!open.length || Date.now() > settleDeadline) break
      await sleep(1000)
    }

    await printReport(client, procs, open)
  } finally {
    console.log('cleanup: stopping processes')
    await client?.end().catch(() => undefined)
    await Promise.all(procs.map(stopProc))
    for (const p of procs) console.log(`  ${p.name} (pid ${p.child.pid}) exit ${JSON.stringify(p.exited)}`)
    await new Promise<void>((r) => sink.close(() => r()))
    const closed = new Promise<void>((r) => receiver.server.close(() => r()))
    receiver.server.closeAllConnections()
    await closed
    if (process.env.RACE_KEEP_DB !== '1') {
      execFileSync('psql', [
        '-h',
        PG_HOST,
        '-U',
        PG_USER,
        '-d',
        'postgres',
        '-qc',
        `DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`,
      ])
      console.log(`  dropped ${DB}`)
    } else console.log(`  kept ${DB}`)
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error('race failed:', err)
    process.exit(1)
  },
)
