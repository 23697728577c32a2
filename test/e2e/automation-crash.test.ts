/**
 * Crash safety of the automation engine, with real processes: a worker killed (SIGKILL) mid-node and again
 * during a wait, restarted each time, executes every node of every run exactly once: one log entry per run and
 * node, and exactly one mail per subscriber from the node after the wait.
 *
 * Lean by design (CI time): the installation is migrated in this process (no start-up just to migrate), the
 * second worker is killed as soon as the API shows the runs in their wait (not after a fixed sleep that must
 * cover a slow start), so the wait can be short, and the end is read from the pipeline's stats, not slept for.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { MIGRATIONS_DIR } from '../../src/core/context.js'
import { openDatabase } from '../../src/core/db/client.js'
import { queryOne, queryRows } from '../../src/core/db/sql.js'
import { insertPipeline } from '../../src/modules/pipelines/index.js'
import { seedSendingList, workerEnvOf } from '../helpers/campaign-seed.js'
import { freshInstallation, startServerProcess, type Installation } from '../helpers/processes.js'
import { startSmtpSink } from '../helpers/smtp-sink.js'

const RUNS = 400
// The second worker is killed within moments of the runs entering the wait (it polls the API for it), so a
// few seconds are a wait it dies in, while the first worker, killed within 250 ms of its start, is not far
// enough to begin it; the third worker's start-up may well outlast the wait, which is the point.
const WAIT_SECONDS = 8

interface Seeded {
  pipelineId: number
  apiKey: string
  /** The run claimed last (highest id): once it has executed its wait, the round that did has committed. */
  lastEmail: string
}

async function setUp(inst: Installation): Promise<Seeded> {
  // Migrated here, not by a server started just for it (a template-made test database is migrated already).
  const handle = await openDatabase(
    inst.databaseUrl ? { databaseUrl: inst.databaseUrl } : { dataDir: inst.dataDir },
  )
  await handle.migrate(MIGRATIONS_DIR)
  await handle.close()
  return inst.withDb(async (db, accounts) => {
    const { account_id: accountId, api_key: apiKey } = await accounts.createAccount('Crash', 'marketer')
    const listId = await seedSendingList(db, accountId, {
      recipients: RUNS,
      selector: 'auto',
      listName: 'Auto',
    })
    const template = await queryOne<{ id: number }>(
      db,
      sql`INSERT INTO templates (account_id, name, html, subject)
          VALUES (${accountId}, 'After', '<p>Hi *|name|*</p>', 'After the wait') RETURNING id`,
    )
    const pipeline = await insertPipeline(db, {
      accountId,
      name: 'Crash',
      listId,
      status: 'active',
      trigger: { type: 'api' },
      reentry: 'once',
      start: 't',
      actions: [
        { id: 't', type: 'tag', properties: { name: 'Tag', tag: 'started' }, next: ['w'] },
        {
          id: 'w',
          type: 'wait',
          properties: { name: 'Wait', value: WAIT_SECONDS, unit: 'seconds' },
          next: ['m'],
        },
        {
          id: 'm',
          type: 'mail',
          properties: { name: 'Mail', template: template!.id, from_email: 'news@shop.example' },
          next: { default: ['e'] },
        },
        { id: 'e', type: 'end', properties: { name: 'End' }, next: null },
      ],
    })
    // Every subscriber triggered at once, as POST /pipelines/{id}/trigger would.
    await db.execute(sql`INSERT INTO automation_runs (account_id, pipeline_id, pipeline_version, contact_id, email,
                                                      trigger_kind, status, node_id, due_at, state, started_at)
      SELECT ${accountId}, ${pipeline.id}, 1, c.id, c.email, 'api', 'active', 't', now(), '{}'::jsonb, now()
      FROM memberships m JOIN contacts c ON c.id = m.contact_id WHERE m.list_id = ${listId}`)
    const last = await queryOne<{ email: string }>(
      db,
      sql`SELECT email FROM automation_runs WHERE pipeline_id = ${pipeline.id} ORDER BY id DESC LIMIT 1`,
    )
    return { pipelineId: pipeline.id, apiKey, lastEmail: last!.email }
  })
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls `check` every 50 ms until it holds; false after timeoutMs. */
async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check()) return true
    if (Date.now() > deadline) return false
    await sleep(50)
  }
}

async function api(base: string, key: string, path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, { headers: { key }, signal: AbortSignal.timeout(5000) })
  return (await res.json()) as Record<string, unknown>
}

const sink = await startSmtpSink()

describe('automation runs survive SIGKILL', () => {
  it('a worker killed mid-node and during a wait, restarted, executes every node exactly once', async () => {
    const inst = await freshInstallation()
    const { pipelineId, apiKey, lastEmail } = await setUp(inst)
    const env = { ...workerEnvOf(inst, sink.url), RUN_LEASE_SECONDS: '2', ROLE: 'all' }

    // Mid-node: somewhere in the first rounds of tag and wait nodes.
    const a = await startServerProcess(env)
    await sleep(Math.floor(Math.random() * 250))
    await a.kill()
    // During the wait: killed as soon as the last run's wait is logged (the runs before it were claimed in the
    // same rounds), seconds before any of them is due.
    const b = await startServerProcess(env)
    const waiting = await waitUntil(async () => {
      const page = await api(b.url!, apiKey, `/subscribers/${encodeURIComponent(lastEmail)}/automation-log`)
      return ((page.automation_log ?? []) as { action_id: string }[]).some((l) => l.action_id === 'w')
    }, 60_000)
    await b.kill()
    assert.ok(waiting, 'the runs reached the wait')
    assert.equal(sink.messages.length, 0, 'nothing was mailed before the wait ended')

    const c = await startServerProcess(env)
    await waitUntil(() => sink.messages.length >= RUNS, 60_000)
    // Every run at its end (a run executed twice would show as a second mail row below, whatever the sink got).
    await waitUntil(async () => {
      const { stats } = (await api(c.url!, apiKey, `/pipelines/${pipelineId}/stats`)) as {
        stats?: { ended?: number }
      }
      return stats?.ended === RUNS
    }, 30_000)
    await c.stop()

    const perAddress = new Map<string, number>()
    for (const m of sink.messages)
      for (const to of m.envelopeTo) perAddress.set(to, (perAddress.get(to) ?? 0) + 1)
    assert.equal(perAddress.size, RUNS, 'every subscriber got the mail after the wait')
    assert.equal(sink.messages.length, RUNS, 'nobody got it twice')

    await inst.withDb(async (db) => {
      const perRun = await queryRows<{ actions: string; n: number }>(
        db,
        sql`SELECT string_agg(action_id, ',' ORDER BY id) AS actions, count(*)::int AS n
            FROM automation_log WHERE pipeline_id = ${pipelineId} GROUP BY run_id`,
      )
      assert.equal(perRun.length, RUNS)
      for (const r of perRun) assert.equal(r.actions, 't,w,m,e')
      const runs = await queryOne<{ ended: number; mails: number; tags: number }>(
        db,
        sql`SELECT (SELECT count(*) FROM automation_runs WHERE pipeline_id = ${pipelineId} AND status = 'ended')::int AS ended,
                   (SELECT count(*) FROM messages WHERE pipeline_id = ${pipelineId} AND action_id = 'm')::int AS mails,
                   (SELECT count(*) FROM contacts WHERE tags = ARRAY['started'])::int AS tags`,
      )
      assert.deepEqual(runs, { ended: RUNS, mails: RUNS, tags: RUNS })
    })
  })
})
