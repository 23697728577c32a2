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
 * mail → end, in this process (the clock must be movable). Phase 1 executes mail and wait for every run; then
 * the clock jumps a day, to the moment the first wait falls due, and runs fall due at the pace their waits
 * began: phase 2 is the rest, and each check's delay after its wait's due time is measured (p99 ≤ 5 s).
 * Node executions/s over the time the engine was busy (bar ≥ 2,000/s on PostgreSQL). The mail nodes write
 * their ledger rows and send jobs; nothing is delivered (sending has its own bench).
 */
export interface AutomationFigures {
  runs: number
  nodeExecutions: number
  wallSeconds: number
  busySeconds: number
  nodeExecPerSec: number
  phase1ExecPerSec: number
  phase2ExecPerSec: number
  waitDelayP50Ms: number
  waitDelayP99Ms: number
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

export async function benchAutomation(db: BenchDb, pgUrl: string | undefined): Promise<AutomationFigures> {
  const runs = Number(process.env.BENCH_AUTOMATION_RUNS ?? 100_000)
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
    const engine = createEngine(ctx, { batch: 1000 })
    let busyMs = 0
    /** Rounds until `done` says so; the time of rounds that executed something counts as busy. */
    const drive = async (done: () => Promise<boolean>) => {
      for (let idle = 0; ;) {
        const t0 = performance.now()
        const n = await engine.runOnce(1)
        if (n > 0) {
          busyMs += performance.now() - t0
          idle = 0
          continue
        }
        if (await done()) return
        if (++idle > 20_000) throw new Error('automation bench stalled')
        await new Promise((r) => setTimeout(r, 10))
      }
    }
    const start = performance.now()
    await drive(async () => (await logCount(ctx, pipelineId)) >= 2 * runs)
    const phase1Busy = busyMs
    // To the moment the first wait falls due: the rest fall due at the pace their waits began.
    const first = await queryOne<{ ms: string }>(
      ctx.db,
      sql`SELECT (extract(epoch FROM min(created_at)) * 1000)::bigint::text AS ms FROM automation_log
          WHERE pipeline_id = ${pipelineId} AND action_id = 'w'`,
    )
    clock.offset += Number(first!.ms) + DAY_MS - clock.now().getTime()
    await drive(async () => (await logCount(ctx, pipelineId)) >= 6 * runs)
    const wall = (performance.now() - start) / 1000
    const delays = await queryRows<{ ms: number }>(
      ctx.db,
      sql`SELECT (extract(epoch FROM c.created_at - (w.created_at + interval '1 day')) * 1000)::float8 AS ms
          FROM automation_log w JOIN automation_log c ON c.run_id = w.run_id AND c.action_id = 'c'
          WHERE w.pipeline_id = ${pipelineId} AND w.action_id = 'w'
          ORDER BY 1`,
    )
    const at = (q: number) => round(delays[Math.min(delays.length - 1, Math.floor(q * delays.length))]!.ms)
    const executions = await logCount(ctx, pipelineId)
    return {
      runs,
      nodeExecutions: executions,
      wallSeconds: round(wall),
      busySeconds: round(busyMs / 1000),
      nodeExecPerSec: round(executions / (busyMs / 1000)),
      phase1ExecPerSec: round((2 * runs) / (phase1Busy / 1000)),
      phase2ExecPerSec: round((4 * runs) / ((busyMs - phase1Busy) / 1000)),
      waitDelayP50Ms: at(0.5),
      waitDelayP99Ms: at(0.99),
    }
  } finally {
    await ctx.close()
    await opened.drop()
  }
}
