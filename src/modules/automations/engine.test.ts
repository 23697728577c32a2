import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { sql } from 'drizzle-orm'
import { queryRows } from '../../core/db/sql.js'
import { startSender } from '../delivery/index.js'
import { sendOutcomes } from '../outcomes/index.js'
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

// At file level so it closes after the app (the app's pooled SMTP connections would hold its close).
const sink = await startSmtpSink()

describe('automation engine: a multi-day flow', async () => {
  const { t, clock } = await startAutomationApp(sink)
  const listId = await createList(t)
  const welcome = await createTemplate(t, '<p>Welcome *|name|*</p>', 'Welcome *|name|*')
  const followUp = await createTemplate(t, '<p>Still there, *|name|*?</p>', 'Follow-up')
  const pipelineId = await createPipeline(t, listId, [
    node('m1', 'mail', { template: welcome }, { default: ['w'], quarantine_skip: [] }),
    node('w', 'wait', { value: 3, unit: 'days' }, ['c']),
    node('c', 'check', { condition: { tag: 'vip' } }, { yes: ['t'], no: ['e'] }),
    node('t', 'tag', { tag: 'nurtured' }, ['m2']),
    node('m2', 'mail', { template: followUp, subject: 'For you, *|name|*' }, { default: ['e'] }),
    node('e', 'end'),
  ])

  it('runs mail, a three-day wait, check, tag, mail, end: each node once, logged, mail at the sink', async () => {
    await subscribe(t, listId, 'vip@example.cz', { name: 'Vera', tags: ['vip'] })
    await subscribe(t, listId, 'plain@example.cz', { name: 'Petr' })
    // Without trigger_autoresponders nothing starts.
    await subscribe(t, listId, 'quiet@example.cz', {}, { trigger_autoresponders: false })
    await settle(t)
    const [first] = await mailsTo(sink, 'vip@example.cz', 1)
    assert.equal(first!.parsed.subject, 'Welcome Vera')
    assert.match(String(first!.parsed.html), /Welcome Vera/)
    assert.equal(first!.parsed.from?.value[0]?.address, 'news@shop.example')
    await mailsTo(sink, 'plain@example.cz', 1)
    let runs = await runsOf(t, pipelineId)
    assert.deepEqual(
      runs.map((r) => [r.email, r.status, r.node_id]),
      [
        ['vip@example.cz', 'active', 'c'],
        ['plain@example.cz', 'active', 'c'],
      ],
    )

    // Two days on nothing is due; three days on the check runs.
    clock.advance(2 * DAY)
    await settle(t)
    assert.equal((await logOf(t, pipelineId)).length, 4)
    clock.advance(DAY + 1000)
    await settle(t)
    runs = await runsOf(t, pipelineId)
    assert.deepEqual(
      runs.map((r) => [r.status, r.end_reason]),
      [
        ['ended', 'end node'],
        ['ended', 'end node'],
      ],
    )
    const second = await mailsTo(sink, 'vip@example.cz', 2)
    assert.equal(second[1]!.parsed.subject, 'For you, Vera')
    assert.deepEqual(await tagsOf(t, 'vip@example.cz'), ['vip', 'nurtured'])
    assert.deepEqual(await tagsOf(t, 'plain@example.cz'), [])
    assert.equal(sink.messages.filter((m) => m.envelopeTo.includes('plain@example.cz')).length, 1)
    assert.equal(sink.messages.filter((m) => m.envelopeTo.includes('quiet@example.cz')).length, 0)

    const vip = await logOf(t, pipelineId, 'vip@example.cz')
    assert.deepEqual(
      vip.map((l) => [l.action_id, l.next]),
      [
        ['m1', ['w']],
        ['w', ['c']],
        ['c', ['t']],
        ['t', ['m2']],
        ['m2', ['e']],
        ['e', null],
      ],
    )
    assert.equal(vip[2]!.props.result, 'yes')
    assert.equal(typeof vip[0]!.props.message_id, 'number')
    assert.equal((runs[0]!.state.mail as Record<string, number>).m1, vip[0]!.props.message_id)
    const plain = await logOf(t, pipelineId, 'plain@example.cz')
    assert.deepEqual(
      plain.map((l) => l.action_id),
      ['m1', 'w', 'c', 'e'],
    )
  })

  it('reentry once: subscribing again after unsubscribing starts nothing', async () => {
    await t.req('DELETE', `/lists/${listId}/unsubscribe`, { body: { email: 'plain@example.cz' } })
    await subscribe(t, listId, 'plain@example.cz', {}, { resubscribe: true })
    await settle(t)
    assert.equal((await runsOf(t, pipelineId)).length, 2)
  })

  it("wakes this process's senders once a mail node's transaction has committed", async () => {
    const p = await createPipeline(
      t,
      listId,
      [node('m', 'mail', { template: welcome }, { default: ['e'] }), node('e', 'end')],
      { trigger: { type: 'api' } },
    )
    // A sender with no loop of its own, whose wake is counted; each wake reads the node's mail rows from the
    // pool, which sees them only once the node's transaction has committed.
    const sender = startSender(t.ctx, { loop: false, outcomes: sendOutcomes })
    const seen: Promise<number>[] = []
    sender.wake = () => {
      seen.push(
        queryRows<{ n: number }>(
          t.ctx.db,
          sql`SELECT count(*)::int AS n FROM messages WHERE pipeline_id = ${p}`,
        ).then((rows) => rows[0]!.n),
      )
    }
    try {
      await t.req('POST', `/pipelines/${p}/trigger`, { body: { email: 'vip@example.cz' } })
      await settle(t)
      assert.deepEqual(await Promise.all(seen), [1])
    } finally {
      await sender.stop()
    }
  })
})
