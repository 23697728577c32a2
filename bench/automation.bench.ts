import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import pino from 'pino'
import { sql } from 'drizzle-orm'
import type { Clock } from '../src/core/clock.js'
import { loadConfig } from '../src/core/config.js'
import { createContext, type AppContext } from '../src/core/context.js'
import { openDatabase } from '../src/core/db/client.js'
import { queryOne, queryRows } from '../src/core/db/sql.js'
import { createAccountService, jobQueues } from '../src/modules/index.js'
import { insertPipeline } from '../src/modules/pipelines/index.js'
import { createEngine } from '../src/modules/automations/engine.js'
import { round } from './lib/measure.js'
import type { BenchDb } from './lib/server-process.js'

/**
 * Issue 13: BENCH_AUTOMATION_RUNS subscribers (default 100,000) through mail → wait (1 day) → check → tag →
 * mail → end, in this process (the clock must be movable), with the engine's production settings (batch,
 * lanes, and its 250 ms poll when a round finds less than a full batch).
 *
 * Phase 1, capacity: every run is due at once (all triggered together); the engine executes mail and wait for
 * all of them as fast as it can. Its node executions per busy second are the bar's figure (≥ 2,000/s on
 * PostgreSQL, goal ≥ 10,000).
 *
 * Phase 2, the delay under load: the clock moves a day on, and the waits fall due at a stated pace,
 * BENCH_AUTOMATION_DUE_PER_SEC (default 500/s: each due run then asks for four node executions, check, tag,
 * mail and end, so the flow asks the engine for 2,000 node executions/s, the bar), in the order the waits
 * began. Measured per run: from its wait's due time to the moment the engine began executing its check (the
 * check's log time, the engine clock at the start of the check's group; that group commits a group's execution
 * later). p99 ≤ 5 s is the bar. The load it is measured under: the waits falling due at that pace plus the tag,
 * mail and end of every run due before, on one engine process (the production loop, its idle poll included);
 * no sender runs (the mail nodes write ledger rows; sending has its own bench). A pace the engine cannot keep
 * shows as a delay that grows through the phase (p99 near the phase's length), not as a lower pace.
 *
 * CPU: this process's CPU time per node execution in each phase (process.cpuUsage), the database's not included.
 */
export interface AutomationFigures {
  runs: number
  nodeExecutions: number
  wallSeconds: number
  /** Phase 1: every run due at once, mail and wait for each. */
  phase1BusySeconds: number
  phase1ExecPerSec: number
  phase1CpuMsPerExec: number
  /** Phase 2: waits falling due at duePerSec; check, tag, mail, end for each. */
  duePerSec: number
  phase2Seconds: number
  phase2BusySeconds: number
  phase2ExecPerBusySec: number
  phase2CpuMsPerExec: number
  waitDelayP50Ms: number
  waitDelayP99Ms: number
  waitDelayMaxMs: number
}

const DAY_MS = 86_400_000

/** The real time moved by an offset the bench sets. */
class OffsetClock implements Clock {
  offset = 0
  now(): Date {
    return new Date(Date.now() + this.offset)
  }
}

async function openBenchDatabase(db: BenchDb, pgUrl: string | undefined) {
  if (db === 'pglite') {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidings-auto-bench-'))
    const handle = await openDatabase({ dataDir })
    return { handle, dataDir, drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }) }
  }
  if (!pgUrl) throw new Error('no PostgreSQL')
  const name = `tidings_bench_${randomBytes(5).toString('hex')}`
  const admin = new pg.Client({ connectionString: pgUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const u = new URL(pgUrl)
  u.pathname = `/${name}`
  const handle = await openDatabase({ databaseUrl: u.toString(), poolSize: 10 })
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidings-auto-bench-'))
  return {
    handle,
    dataDir,
    databaseUrl: u.toString(),
    drop: async () => {
      const a = new pg.Client({ connectionString: pgUrl })
      await a.connect()
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await a.end()
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

async function seed(ctx: AppContext, runs: number): Promise<number> {
  const { account_id: accountId } = await createAccountService(ctx).createAccount('Bench', 'marketer')
  const list = await queryOne<{ id: number }>(
    ctx.db,
    sql`INSERT INTO lists (account_id, name, from_name, from_email)
        VALUES (${accountId}, 'Bench', 'Shop', 'news@bench.example') RETURNING id`,
  )
  const listId = list!.id
  const tpl = await queryOne<{ id: number }>(
    ctx.db,
    sql`INSERT INTO templates (account_id, name, html, subject)
        VALUES (${accountId}, 'T', '<p>Hi *|name|*</p>', 'Hi *|name|*') RETURNING id`,
  )
  await ctx.db.execute(sql`INSERT INTO contacts (account_id, email, name, tags)
    SELECT ${accountId}, 'a' || g || '@bench.example', 'A' || g,
           CASE WHEN g % 2 = 0 THEN ARRAY['vip'] ELSE '{}'::text[] END
    FROM generate_series(1, ${runs}::int) g`)
  await ctx.db.execute(sql`INSERT INTO memberships (account_id, list_id, contact_id, status)
    SELECT ${accountId}, ${listId}, id, 1 FROM contacts WHERE account_id = ${accountId}`)
  const p = await insertPipeline(ctx.db, {
    accountId,
    name: 'Bench',
    listId,
    status: 'active',
    trigger: { type: 'api' },
    reentry: 'once',
    start: 'm1',
    actions: [
      {
        id: 'm1',
        type: 'mail',
        properties: { name: 'Welcome', template: tpl!.id },
        next: { default: ['w'] },
      },
      { id: 'w', type: 'wait', properties: { name: 'Day', value: 1, unit: 'days' }, next: ['c'] },
      {
        id: 'c',
        type: 'check',
        properties: { name: 'VIP?', condition: { tag: 'vip' } },
        next: { yes: ['t'], no: ['t'] },
      },
      { id: 't', type: 'tag', properties: { name: 'Tag', tag: 'nurtured' }, next: ['m2'] },
      {
        id: 'm2',
        type: 'mail',
        properties: { name: 'Follow-up', template: tpl!.id },
        next: { default: ['e'] },
      },
      { id: 'e', type: 'end', properties: { name: 'End' }, next: null },
    ],
  })
  const now = ctx.clock.now().toISOString()
  await ctx.db
    .execute(sql`INSERT INTO automation_runs (account_id, pipeline_id, pipeline_version, contact_id, email,
                                                        trigger_kind, status, node_id, due_at, state, started_at)
    SELECT ${accountId}, ${p.id}, 1, c.id, c.email, 'api', 'active', 'm1', ${now}::timestamptz, '{}'::jsonb,
           ${now}::timestamptz
    FROM contacts c WHERE c.account_id = ${accountId}`)
  await ctx.db.execute(sql`ANALYZE`)
  return p.id
}

async function logCount(ctx: AppContext, pipelineId: number): Promise<number> {
  const row = await queryOne<{ n: number }>(
    ctx.db,
    sql`SELECT count(*)::int AS n FROM automation_log WHERE pipeline_id = ${pipelineId}`,
  )
  return row!.n
}

/** The engine's idle poll (createEngine's default), passed explicitly so the bench drives rounds at its pace. */
const POLL_MS = 250
/** The engine's batch (createEngine's default): a round that claims this many is followed at once by the next. */
const BATCH = 500

const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

export async function benchAutomation(db: BenchDb, pgUrl: string | undefined): Promise<AutomationFigures> {
  const runs = Number(process.env.BENCH_AUTOMATION_RUNS ?? 100_000)
  const duePerSec = Number(process.env.BENCH_AUTOMATION_DUE_PER_SEC ?? 500)
  const opened = await openBenchDatabase(db, pgUrl)
  const clock = new OffsetClock()
  const config = {
    ...loadConfig({}),
    dataDir: opened.dataDir,
    databaseUrl: opened.databaseUrl,
    logLevel: 'warn',
  }
  const ctx = await createContext(config, { dbHandle: opened.handle, clock, log: pino({ level: 'warn' }) })
  try {
    await ctx.jobs.start(jobQueues)
    const pipelineId = await seed(ctx, runs)
    // Production settings: what startAutomationEngine runs.
    const engine = createEngine(ctx, { batch: BATCH, pollMs: POLL_MS })
    let busyMs = 0
    /**
     * Rounds as the engine's own loop takes them (the next at once after a full batch, else after its poll),
     * until `done`; the time of rounds that executed something counts as busy.
     */
    const drive = async (done: () => Promise<boolean>) => {
      for (let rounds = 0; rounds < 1_000_000; rounds++) {
        const t0 = performance.now()
        const n = await engine.runOnce(1)
        if (n > 0) busyMs += performance.now() - t0
        if (n >= BATCH) continue
        if (await done()) return
        await new Promise((r) => setTimeout(r, POLL_MS))
      }
      throw new Error('automation bench stalled')
    }
    const start = performance.now()
    const cpu0 = cpuMs()
    await drive(async () => (await logCount(ctx, pipelineId)) >= 2 * runs)
    const phase1Busy = busyMs
    const phase1Cpu = cpuMs() - cpu0

    // A day on, the waits fall due at duePerSec in the order they began: due_i = T0 + i / duePerSec.
    const first = await queryOne<{ ms: string }>(
      ctx.db,
      sql`SELECT (extract(epoch FROM min(created_at)) * 1000)::bigint::text AS ms FROM automation_log
          WHERE pipeline_id = ${pipelineId} AND action_id = 'w'`,
    )
    const t0 = Number(first!.ms) + DAY_MS
    await ctx.db.execute(sql`CREATE TABLE bench_due (run_id bigint PRIMARY KEY, due_at timestamptz NOT NULL)`)
    await ctx.db.execute(sql`INSERT INTO bench_due
      SELECT id, to_timestamp(${t0 / 1000}::float8) + (row_number() OVER (ORDER BY due_at, id) - 1)
                 * (interval '1 second' / ${duePerSec}::float8)
      FROM automation_runs WHERE pipeline_id = ${pipelineId} AND status = 'active' AND node_id = 'c'`)
    await ctx.db.execute(
      sql`UPDATE automation_runs r SET due_at = d.due_at FROM bench_due d WHERE r.id = d.run_id`,
    )
    await ctx.db.execute(sql`ANALYZE automation_runs`)
    clock.offset += t0 - clock.now().getTime()
    const phase2Start = performance.now()
    const cpu1 = cpuMs()
    await drive(async () => (await logCount(ctx, pipelineId)) >= 6 * runs)
    const phase2Seconds = (performance.now() - phase2Start) / 1000
    const phase2Cpu = cpuMs() - cpu1
    const wall = (performance.now() - start) / 1000
    const delays = await queryRows<{ ms: number }>(
      ctx.db,
      sql`SELECT (extract(epoch FROM c.created_at - d.due_at) * 1000)::float8 AS ms
          FROM bench_due d JOIN automation_log c ON c.run_id = d.run_id AND c.action_id = 'c'
          ORDER BY 1`,
    )
    const at = (q: number) => round(delays[Math.min(delays.length - 1, Math.floor(q * delays.length))]!.ms)
    const executions = await logCount(ctx, pipelineId)
    const phase2Busy = busyMs - phase1Busy
    return {
      runs,
      nodeExecutions: executions,
      wallSeconds: round(wall),
      phase1BusySeconds: round(phase1Busy / 1000),
      phase1ExecPerSec: round((2 * runs) / (phase1Busy / 1000)),
      phase1CpuMsPerExec: round(phase1Cpu / (2 * runs), 3),
      duePerSec,
      phase2Seconds: round(phase2Seconds),
      phase2BusySeconds: round(phase2Busy / 1000),
      phase2ExecPerBusySec: round((4 * runs) / (phase2Busy / 1000)),
      phase2CpuMsPerExec: round(phase2Cpu / (4 * runs), 3),
      waitDelayP50Ms: at(0.5),
      waitDelayP99Ms: at(0.99),
      waitDelayMaxMs: at(1),
    }
  } finally {
    await ctx.close()
    await opened.drop()
  }
}
