import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import type { TestApp } from '../../../test/helpers/app.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { queryRows } from '../../core/db/sql.js'
import type { PipelineNode } from '../pipelines/index.js'
import {
  createList,
  createPipeline,
  createTemplate,
  DAY,
  logOf,
  mailsTo,
  node,
  runsOf,
  settle,
  subscribe,
  tagsOf,
  startAutomationApp,
} from './automations.test-helpers.js'

const sink = await startSmtpSink()

/**
 * Each run's address, status and end reason, by address: two subscribers' runs start from jobs that may be taken
 * in either order, so their ids say nothing about who subscribed first.
 */
async function runOutcomes(t: TestApp, pipelineId: number) {
  const runs = await runsOf(t, pipelineId)
  return runs.map((r) => [r.email, r.status, r.end_reason]).sort((a, b) => a[0]!.localeCompare(b[0]!))
}
describe('automation runs across edits, pauses, deletes and unsubscribes', async () => {
  const { t, clock } = await startAutomationApp(sink)
  const tpl = await createTemplate(t, '<p>Hello</p>', 'Hello')
  const edit = (id: number, actions: PipelineNode[]) =>
    t.ctx.db.execute(
      sql`UPDATE pipelines SET actions = ${JSON.stringify(actions)}::jsonb, version = version + 1 WHERE id = ${id}`,
    )
  const waitThen = (after: PipelineNode[]) => [
    node('w', 'wait', { value: 1, unit: 'days' }, [after[0]!.id]),
    ...after,
  ]

  it('an edit moves waiting runs to the same node of the new graph, or ends them (logged) when it is gone', async () => {
    const listId = await createList(t)
    const kept = await createPipeline(t, listId, waitThen([node('x', 'tag', { tag: 'v1' })]))
    const removed = await createPipeline(t, listId, waitThen([node('y', 'tag', { tag: 'never' })]))
    await subscribe(t, listId, 'edit@example.cz')
    await settle(t)
    await edit(kept, waitThen([node('x', 'tag', { tag: 'v2' })]))
    await edit(removed, [
      node('w', 'wait', { value: 1, unit: 'days' }, ['z']),
      node('z', 'tag', { tag: 'z' }),
    ])
    clock.advance(DAY + 1000)
    await settle(t)
    assert.deepEqual(await tagsOf(t, 'edit@example.cz'), ['v2'])
    const [gone] = await runsOf(t, removed)
    assert.deepEqual([gone!.status, gone!.end_reason], ['ended', 'node removed'])
    const last = (await logOf(t, removed)).at(-1)!
    assert.deepEqual([last.action_id, last.props.ended, last.next], ['y', 'node removed', null])
  })

  it('runs of a paused pipeline wait and go on when it is active again; a deleted one stops its runs', async () => {
    const listId = await createList(t)
    const paused = await createPipeline(t, listId, waitThen([node('x', 'tag', { tag: 'resumed' })]))
    const deleted = await createPipeline(t, listId, waitThen([node('y', 'tag', { tag: 'deleted' })]))
    await subscribe(t, listId, 'pause@example.cz')
    await settle(t)
    await t.ctx.db.execute(sql`UPDATE pipelines SET status = 'paused' WHERE id = ${paused}`)
    await t.ctx.db.execute(sql`UPDATE pipelines SET deleted_at = now() WHERE id = ${deleted}`)
    clock.advance(DAY + 1000)
    await settle(t)
    assert.deepEqual(await tagsOf(t, 'pause@example.cz'), [])
    assert.equal((await runsOf(t, paused))[0]!.status, 'active')
    const [stopped] = await runsOf(t, deleted)
    assert.deepEqual([stopped!.status, stopped!.end_reason], ['stopped', 'pipeline deleted'])
    await t.ctx.db.execute(sql`UPDATE pipelines SET status = 'active' WHERE id = ${paused}`)
    await settle(t)
    assert.deepEqual(await tagsOf(t, 'pause@example.cz'), ['resumed'])
  })

  it('an unsubscribed subscriber gets no further mail: the mail node skips, the nodes after its quarantine_skip port run', async () => {
    const listId = await createList(t)
    const p = await createPipeline(t, listId, [
      node('m1', 'mail', { template: tpl }, { default: ['w'] }),
      node('w', 'wait', { value: 1, unit: 'days' }, ['m2']),
      node('m2', 'mail', { template: tpl }, { default: ['t'], quarantine_skip: ['q'] }),
      node('q', 'note', {}, ['t']),
      node('t', 'tag', { tag: 'after' }, ['m3']),
      node('m3', 'mail', { template: tpl }, { default: ['x'] }),
      node('x', 'tag', { tag: 'not-after-m3' }),
    ])
    await subscribe(t, listId, 'leaver@example.cz')
    await subscribe(t, listId, 'bounced@example.cz')
    await settle(t)
    await mailsTo(sink, 'leaver@example.cz', 1)
    await mailsTo(sink, 'bounced@example.cz', 1)
    await t.req('DELETE', `/lists/${listId}/unsubscribe`, { body: { email: 'leaver@example.cz' } })
    await t.ctx.db.execute(
      sql`UPDATE contacts SET suppressed = 'hard_bounce' WHERE email = 'bounced@example.cz'`,
    )
    clock.advance(DAY + 1000)
    await settle(t)
    for (const email of ['leaver@example.cz', 'bounced@example.cz']) {
      assert.equal(sink.messages.filter((m) => m.envelopeTo.includes(email)).length, 1, email)
    }
    // The pipeline's way for those mail skips runs (a note, a tag), and a mail node on it skips them too;
    // what follows only its default port does not run.
    for (const [email, why] of [
      ['leaver@example.cz', 'unsubscribed'],
      ['bounced@example.cz', 'suppressed'],
    ]) {
      const log = await logOf(t, p, email)
      assert.deepEqual(
        log.map((l) => [l.action_id, l.props.skipped ?? l.props.stopped ?? null]),
        [
          ['m1', null],
          ['w', null],
          ['m2', why],
          ['q', null],
          ['t', null],
          ['m3', why],
        ],
        email,
      )
      assert.deepEqual(await tagsOf(t, email!), ['after'], email)
    }
    assert.deepEqual(await runOutcomes(t, p), [
      ['bounced@example.cz', 'ended', 'end of branch'],
      ['leaver@example.cz', 'ended', 'end of branch'],
    ])
  })

  it('a GDPR erasure pseudonymises the runs and log as it does the mail log, and stops the runs', async () => {
    const listId = await createList(t)
    const p = await createPipeline(t, listId, [
      node('m', 'mail', { template: tpl }, { default: ['w'] }),
      ...waitThen([node('x', 'tag', { tag: 'after' })]),
    ])
    await subscribe(t, listId, 'forget@example.cz')
    await subscribe(t, listId, 'keep@example.cz')
    await settle(t)
    await mailsTo(sink, 'forget@example.cz', 1)
    const res = await t.req('DELETE', '/subscribers/forget@example.cz/delete')
    assert.equal(res.status, 200)
    clock.advance(DAY + 1000)
    await settle(t)
    const [mail] = await queryRows<{ email: string }>(
      t.ctx.db,
      sql`SELECT email FROM messages WHERE pipeline_id = ${p} AND email <> 'keep@example.cz'`,
    )
    const stand = mail!.email
    assert.match(stand, /^erased-[0-9a-f]+@erased\.invalid$/)
    assert.deepEqual(await runOutcomes(t, p), [
      [stand, 'stopped', 'erased'],
      ['keep@example.cz', 'ended', 'end of branch'],
    ])
    // The log keeps what happened under the stand-in; nothing ran after the erasure.
    assert.deepEqual(
      (await logOf(t, p, stand)).map((l) => l.action_id),
      ['m', 'w'],
    )
    assert.deepEqual(await logOf(t, p, 'forget@example.cz'), [])
    const left = await queryRows<{ n: number }>(
      t.ctx.db,
      sql`SELECT ((SELECT count(*) FROM automation_runs WHERE email = 'forget@example.cz')
                + (SELECT count(*) FROM automation_log WHERE email = 'forget@example.cz'))::int AS n`,
    )
    assert.equal(left[0]!.n, 0)
  })
})
