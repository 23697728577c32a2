/**
 * `npx tsx bench/intake-cpu.ts [calls]`: CPU per transactional call, not a rate (the rate is meaningless on a
 * shared machine). Starts a private PostgreSQL cluster with pg_stat_statements, the server on it, smtp-sink and
 * the DNS server; sends `calls` send-message calls at 64 connections, waits until the sink has them all, and
 * prints the server's and PostgreSQL's CPU per call (from /proc), the statements and commits per call, then the
 * same for a trickle (one call at a time), where the sender claims one message per round.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'
import pg from 'pg'
import { freePort } from '../scripts/pg-cluster.js'
import { startDnsServer } from '../test/helpers/dns-server.js'
import { api } from './lib/measure.js'
import { startServerProcess } from './lib/server-process.js'
import { startPostfixSink } from './lib/smtp-sink.js'
import { BENCH_DOMAIN, BENCH_MESSAGE } from './transactional.bench.js'

const TICKS = 100 // USER_HZ

function cpuMs(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS
  } catch {
    return 0
  }
}

/** CPU of the postmaster and all its children (exited children are counted in cutime/cstime). */
function clusterCpuMs(postmaster: number): number {
  let total = 0
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const ppid = Number(f[1])
      if (Number(d) === postmaster) {
        total += ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / TICKS
      } else if (ppid === postmaster) total += ((Number(f[11]) + Number(f[12])) * 1000) / TICKS
    } catch {
      // gone
    }
  }
  return total
}

function findPgBin(name: string): string {
  const base = '/usr/lib/postgresql'
  const v = fs.readdirSync(base).sort((a, b) => Number(b) - Number(a))[0]!
  return path.join(base, v, 'bin', name)
}

async function main() {
  const calls = Number(process.argv[2] ?? 3000)
  const trickle = Number(process.argv[3] ?? 200)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'intake-pg-'))
  spawnSync('chown', ['postgres', dir])
  const asPg = (cmd: string, args: string[]) => {
    const r = spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`${cmd}: ${r.stderr}`)
  }
  const port = await freePort()
  const data = path.join(dir, 'data')
  asPg(findPgBin('initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-instructions'])
  asPg(findPgBin('pg_ctl'), [
    '-D',
    data,
    '-l',
    path.join(dir, 'log'),
    '-w',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100 -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all`,
    'start',
  ])
  const postmaster = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
  const pgUrl = `postgres://postgres@127.0.0.1:${port}/postgres`
  const sink = (await startPostfixSink())!
  const dns = await startDnsServer({}, { autoClose: false })
  const server = await startServerProcess('postgres', pgUrl, { SMTP_URL: sink.url, DNS_SERVERS: dns.address })
  const dbName = `tidings_bench_${process.pid}_${new URL(server.url).port}`
  const db = new pg.Client({ connectionString: pgUrl.replace(/\/postgres$/, `/${dbName}`) })
  await db.connect()
  await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
  try {
    const { url, key } = server
    const domain = (await api(url, key, 'POST', '/domains', { name: BENCH_DOMAIN, type: 'transactional' }))
      .json as { dns: { type: string; host: string; value: string }[] }
    dns.setZone(
      Object.fromEntries(
        domain.dns.map((r) => [
          r.host,
          [
            r.type === 'MX'
              ? { type: 'MX' as const, exchange: r.value }
              : { type: 'TXT' as const, data: r.value },
          ],
        ]),
      ),
    )
    const verified = (await api(url, key, 'POST', `/domains/${BENCH_DOMAIN}/verify`)).json as {
      valid: boolean
    }
    if (!verified.valid) throw new Error('domain did not verify')
    const body = JSON.stringify(BENCH_MESSAGE)
    const fire = (amount: number, connections: number) =>
      autocannon({
        url: `${url}/transactional/send-message`,
        method: 'POST',
        headers: { key, 'content-type': 'application/json' },
        body,
        connections,
        amount,
      })
    const drain = async (target: number) => {
      const deadline = Date.now() + 300_000
      while (sink.count() < target && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    }
    const commits = async () =>
      Number(
        (
          await db.query<{ n: string }>(
            `SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`,
          )
        ).rows[0]!.n,
      )
    const phase = async (name: string, amount: number, connections: number) => {
      await db.query('SELECT pg_stat_statements_reset()')
      const c0 = await commits()
      const s0 = cpuMs(server.pid)
      const p0 = clusterCpuMs(postmaster)
      const sink0 = sink.count()
      const t0 = Date.now()
      const r = await fire(amount, connections)
      const sIntake = cpuMs(server.pid) - s0
      const pIntake = clusterCpuMs(postmaster) - p0
      const intakeSec = (Date.now() - t0) / 1000
      await drain(sink0 + r['2xx'])
      await new Promise((res) => setTimeout(res, 700)) // the last marks
      const secs = (Date.now() - t0) / 1000
      const s1 = cpuMs(server.pid) - s0
      const p1 = clusterCpuMs(postmaster) - p0
      const c1 = (await commits()) - c0
      const stmts = await db.query<{ calls: string; query: string }>(
        `SELECT calls, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
         ORDER BY calls DESC LIMIT 25`,
      )
      const ok = r['2xx']
      const total = stmts.rows.reduce((a, x) => a + Number(x.calls), 0)
      console.log(
        `\n== ${name}: ${ok} answered (non2xx ${r.non2xx}), delivered ${sink.count() - sink0}, intake ${(ok / intakeSec).toFixed(0)} req/s, end to end ${((sink.count() - sink0) / secs).toFixed(0)} msg/s`,
      )
      console.log(
        `server CPU ms/call: intake ${(sIntake / ok).toFixed(3)}, total ${(s1 / ok).toFixed(3)}; postgres CPU ms/call: intake ${(pIntake / ok).toFixed(3)}, total ${(p1 / ok).toFixed(3)}`,
      )
      console.log(`statements/call ${(total / ok).toFixed(2)}, commits/call ${(c1 / ok).toFixed(2)}`)
      for (const x of stmts.rows)
        console.log(`  ${(Number(x.calls) / ok).toFixed(3)}  ${x.calls.padStart(6)}  ${x.query}`)
    }
    await phase('warm-up', 500, 64)
    await phase('burst (64 connections)', calls, 64)
    if (trickle > 0) await phase('trickle (1 connection)', trickle, 1)
  } finally {
    await db.end()
    await server.stop()
    sink.stop()
    await dns.close()
    asPg(findPgBin('pg_ctl'), ['-D', data, '-m', 'immediate', 'stop'])
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

await main()
