import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { needsSecondConnection, withSecondConnection } from '../../../test/helpers/second-connection.js'
import { ManualClock } from '../../core/clock.js'
import { queryRows } from '../../core/db/sql.js'
import {
  createList,
  createPipeline,
  DAY,
  node,
  runsOf,
  START,
  subscribe,
  tagsOf,
} from './automations.test-helpers.js'
import { runAutomations } from './index.js'

describe('the automation engine when PostgreSQL aborts its work to break a deadlock', async () => {
  const clock = new ManualClock(START)
  const t = await startTestApp({ worker: false, clock })
  const listId = await createList(t)
  const pipelineId = await createPipeline(t, listId, [
    node('w1', 'wait', { value: 1, unit: 'days' }, ['t1']),
    node('t1', 'tag', { tag: 'hot' }, ['e1']),
    node('e1', 'end', {}, null),
  ])

  it(
    'runs a tag node again at once: the tag is added and the run ends',
    { skip: needsSecondConnection },
    async () => {
      await subscribe(t, listId, 'a@x.cz')
      await runAutomations(t.ctx)
      clock.advance(DAY + 1000)
      await withSecondConnection(t, async ({ other, untilLockWait }) => {
        // Another transaction holds the contact: the node's transaction locks its run, then waits for the contact.
        await other.query('BEGIN')
        await other.query(`UPDATE contacts SET name = 'other' WHERE email = 'a@x.cz'`)
        const engine = runAutomations(t.ctx)
        await untilLockWait()
        // Now the other wants the run: a deadlock, and the node's transaction (waiting longer) is the one aborted.
        await other.query(`SELECT 1 FROM automation_runs WHERE pipeline_id = $1 FOR UPDATE`, [pipelineId])
        await other.query('COMMIT')
        await engine
      })
      assert.deepEqual(await tagsOf(t, 'a@x.cz'), ['hot'])
      assert.deepEqual(
        (await runsOf(t, pipelineId)).map((r) => `${r.node_id} ${r.status}`),
        ['e1 ended'],
      )
    },
  )

  it('runs an aborted signal consumer again: the run starts', { skip: needsSecondConnection }, async () => {
    const welcome = await createPipeline(t, listId, [node('e1', 'end', {}, null)])
    await subscribe(t, listId, 'b@x.cz')
    const [contact] = await queryRows<{ id: number }>(
      t.ctx.db,
      sql`SELECT id FROM contacts WHERE email = 'b@x.cz'`,
    )
    await withSecondConnection(t, async ({ other, untilLockWait }) => {
      // The other transaction holds the run start's lock; the consumer claims the signal, then waits for it.
      await other.query('BEGIN')
      await other.query('SELECT pg_advisory_xact_lock($1, $2)', [welcome, contact!.id])
      const engine = runAutomations(t.ctx)
      await untilLockWait()
      await other.query('SELECT 1 FROM signals FOR UPDATE')
      await other.query('COMMIT')
      await engine
    })
    await runAutomations(t.ctx)
    assert.deepEqual(
      (await runsOf(t, welcome)).map((r) => `${r.email} ${r.status}`),
      ['b@x.cz ended'],
    )
  })

  it(
    'a tag node locks its contacts in address order, as bulk imports do: no deadlock with them',
    { skip: needsSecondConnection },
    async () => {
      // The later address gets the lower id, so that id order and address order differ.
      await subscribe(t, listId, 'zz@x.cz')
      await subscribe(t, listId, 'aa@x.cz')
      await runAutomations(t.ctx)
      clock.advance(DAY + 1000)
      await withSecondConnection(t, async ({ other, untilLockWait }) => {
        // An import in address order holds the first address; the node waits for it holding no contact…
        await other.query('BEGIN')
        await other.query(`SELECT 1 FROM contacts WHERE email = 'aa@x.cz' FOR NO KEY UPDATE`)
        const engine = runAutomations(t.ctx)
        await untilLockWait()
        // …so the import takes the next one at once (it was the node's, in id order, and the two deadlocked).
        await other.query(`SELECT 1 FROM contacts WHERE email = 'zz@x.cz' FOR NO KEY UPDATE NOWAIT`)
        await other.query('COMMIT')
        await engine
      })
      for (const email of ['aa@x.cz', 'zz@x.cz']) assert.deepEqual(await tagsOf(t, email), ['hot'], email)
    },
  )
})
