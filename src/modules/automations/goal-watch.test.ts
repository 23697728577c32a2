import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { queryRows } from '../../core/db/sql.js'
import {
  createList,
  createPipeline,
  DAY,
  logOf,
  node,
  runsOf,
  settle,
  START,
  subscribe,
  tagsOf,
  startAutomationApp,
} from './automations.test-helpers.js'
import { wakeForGoal } from './goal-watch.repo.js'
import { GOAL_RECHECK_MS } from './nodes.js'

const sink = await startSmtpSink()

describe('goals met while a run waits (contract §6: "meets the condition anywhere")', async () => {
  const { t, clock } = await startAutomationApp(sink)
  const listId = await createList(t)
  const p = await createPipeline(t, listId, [
    node('w', 'wait', { value: 1, unit: 'days' }, ['late']),
    node('late', 'tag', { tag: 'late' }),
    node('g', 'goal', { condition: { tag: 'goalmet' } }, ['reached']),
    node('reached', 'tag', { tag: 'reached' }),
  ])
  await subscribe(t, listId, 'meets@example.cz')
  await subscribe(t, listId, 'waits@example.cz')
  await settle(t)
  const dueOf = async (email: string) => {
    const [row] = await queryRows<{ due: string; state: Record<string, unknown> }>(
      t.ctx.db,
      sql`SELECT due_at::text AS due, state FROM automation_runs WHERE pipeline_id = ${p} AND email = ${email}`,
    )
    return { due: new Date(row!.due.replace(' ', 'T').replace(/\+00$/, 'Z')).getTime(), state: row!.state }
  }

  it('jumps a waiting run to the goal within a recheck, and leaves the others waiting, unlogged', async () => {
    const res = await t.req('PUT', `/lists/${listId}/update-subscriber`, {
      body: { email: 'meets@example.cz', subscriber_data: { tags: ['goalmet'] } },
    })
    assert.equal(res.status, 200, res.text)
    clock.advance(GOAL_RECHECK_MS + 1000)
    await settle(t)
    assert.deepEqual((await tagsOf(t, 'meets@example.cz')).sort(), ['goalmet', 'reached'])
    assert.deepEqual(
      (await logOf(t, p, 'meets@example.cz')).map((l) => [l.action_id, l.props.goal ?? null]),
      [
        ['w', null],
        ['g', 'met'],
        ['reached', null],
      ],
    )
    assert.deepEqual(await tagsOf(t, 'waits@example.cz'), [])
    assert.deepEqual(
      (await logOf(t, p, 'waits@example.cz')).map((l) => l.action_id),
      ['w'],
    )
    assert.equal((await dueOf('waits@example.cz')).due, START.getTime() + DAY)
  })

  it('puts a run woken for a goal it no longer meets back to its wait, as it was and unlogged', async () => {
    const [run] = (await runsOf(t, p)).filter((r) => r.email === 'waits@example.cz')
    assert.equal(await wakeForGoal(t.ctx.db, [run!.id], clock.now()), 1)
    assert.notEqual((await dueOf('waits@example.cz')).due, START.getTime() + DAY)
    await settle(t)
    const after = await dueOf('waits@example.cz')
    assert.equal(after.due, START.getTime() + DAY)
    assert.equal(after.state.wokenFrom, undefined)
    assert.deepEqual(
      (await logOf(t, p, 'waits@example.cz')).map((l) => l.action_id),
      ['w'],
    )
    clock.advance(DAY)
    await settle(t)
    assert.deepEqual(await tagsOf(t, 'waits@example.cz'), ['late'])
  })
})
