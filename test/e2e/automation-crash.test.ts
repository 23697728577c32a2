/**
 * Crash safety of the automation engine, with real processes: a worker killed (SIGKILL) mid-node and again
 * during a few seconds' wait, restarted each time, executes every node of every run exactly once: one log
 * entry per run and node, and exactly one mail per subscriber from the node after the wait.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { queryOne, queryRows } from '../../src/core/db/sql.js'
import { insertPipeline } from '../../src/modules/pipelines/index.js'
import { seedSendingList, workerEnvOf } from '../helpers/campaign-seed.js'
import { freshInstallation, startServerProcess, type Installation } from '../helpers/processes.js'
import { startSmtpSink } from '../helpers/smtp-sink.js'

const RUNS = 400
// Long enough that the second worker is killed during it even on a loaded machine (startup takes seconds).
const WAIT_SECONDS = 12

async function setUp(inst: Installation): Promise<number> {
  // A first start migrates the installation (the embedded one cannot be opened by two processes at once).
  const first = await startServerProcess({ ...inst.env, ROLE: 'all' })
  await first.stop()
  return inst.withDb(async (db, accounts) => {
    const { account_id: accountId } = await accounts.createAccount('Crash', 'marketer')
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
    return pipeline.id
  })
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function waitUntil(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!cond() && Date.now() < deadline) await sleep(50)
}

const sink = await startSmtpSink()

describe('automation runs survive SIGKILL', () => {
  it('a worker killed mid-node and during a wait, restarted, executes every node exactly once', async () => {
    const inst = await freshInstallation()
    const pipelineId = await setUp(inst)
    const env = { ...workerEnvOf(inst, sink.url), RUN_LEASE_SECONDS: '2', ROLE: 'all' }

    // Mid-node: somewhere in the first rounds of tag and wait nodes.
    const a = await startServerProcess(env)
    await sleep(100 + Math.floor(Math.random() * 600))
    await a.kill()
    // During the wait: every run executed its wait (or soon will), none is due for seconds.
    const b = await startServerProcess(env)
    await sleep(2500)
    await b.kill()

    const c = await startServerProcess(env)
    await waitUntil(() => sink.messages.length >= RUNS, 90_000)
    // A run executed twice would mail again after the lease; give it time to show.
    await sleep(3000)
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
