import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import {
  createList,
  createPipeline,
  logOf,
  node,
  runsOf,
  settle,
  subscribe,
  startAutomationApp,
} from './automations.test-helpers.js'
import { MAX_CHAIN } from './run-chain.js'

const sink = await startSmtpSink()

describe('runs started by automations in a row (loops through pipelines)', async () => {
  const { t, clock } = await startAutomationApp(sink)
  const listId = await createList(t)
  const member = async (email: string) => subscribe(t, listId, email, {}, { trigger_autoresponders: false })

  /** A pipeline (API-triggered, repeat re-entry) whose trigger node starts the pipeline itself. */
  async function selfTriggering(first: ReturnType<typeof node>[] = []): Promise<number> {
    const id = await createPipeline(t, listId, [node('placeholder', 'end')], {
      trigger: { type: 'api' },
      reentry: 'repeat',
    })
    const actions = [...first, node('again', 'trigger', { pipeline_id: id })]
    const res = await t.req('PUT', `/pipelines/${id}`, { body: { actions, start: actions[0]!.id } })
    assert.equal(res.status, 200, res.text)
    return id
  }

  it('a trigger node starting its own pipeline stops after MAX_CHAIN runs, logged at the last one', async () => {
    const p = await selfTriggering()
    await member('self@example.cz')
    await t.req('POST', `/pipelines/${p}/trigger`, { body: { email: 'self@example.cz' } })
    // Without the bound this never settles (settle throws after its deadline).
    await settle(t)
    const runs = await runsOf(t, p)
    assert.equal(runs.length, 1 + MAX_CHAIN)
    assert.deepEqual(
      runs.map((r) => r.state.chain ?? 0),
      Array.from({ length: 1 + MAX_CHAIN }, (_, i) => i),
    )
    const results = (await logOf(t, p)).map((l) => l.props.result)
    assert.deepEqual(results, [...Array<string>(MAX_CHAIN).fill('started'), 'loop'])
    assert.match(String((await logOf(t, p)).at(-1)!.props.error), /loop through pipelines/)
  })

  it('a tag flow that adds its own tag again stops too, and other subscribers are not held up by it', async () => {
    const looping = await createPipeline(
      t,
      listId,
      [node('u', 'untag', { tag: 'again' }, ['g']), node('g', 'tag', { tag: 'again' })],
      { trigger: { type: 'tag', tag: 'again' }, reentry: 'repeat' },
    )
    const starter = await createPipeline(t, listId, [node('s', 'tag', { tag: 'again' })], {
      trigger: { type: 'api' },
      reentry: 'repeat',
    })
    await member('tags@example.cz')
    await member('bystander@example.cz')
    await t.req('POST', `/pipelines/${starter}/trigger`, { body: { email: 'tags@example.cz' } })
    await settle(t)
    // The starter's run is the chain's first (0); the tag pipeline's runs are the 1st to MAX_CHAIN-th after it.
    const runs = await runsOf(t, looping)
    assert.equal(runs.length, MAX_CHAIN)
    assert.ok(runs.every((r) => r.status === 'ended'))
    // A tag the subscriber's own API call adds starts a fresh chain: its first run is the chain's first (0).
    const res = await t.req('PUT', `/lists/${listId}/update-subscriber`, {
      body: { email: 'bystander@example.cz', subscriber_data: { tags: ['again'] } },
    })
    assert.equal(res.status, 200, res.text)
    await settle(t)
    const theirs = (await runsOf(t, looping)).filter((r) => r.email === 'bystander@example.cz')
    assert.equal(theirs.length, 1 + MAX_CHAIN)
  })

  it('a loop with a wait in it goes on past the bound, at the pace of its wait', async () => {
    const p = await selfTriggering([node('w', 'wait', { value: 1, unit: 'seconds' }, ['again'])])
    await member('paced@example.cz')
    await t.req('POST', `/pipelines/${p}/trigger`, { body: { email: 'paced@example.cz' } })
    const rounds = MAX_CHAIN + 3
    for (let i = 0; i < rounds; i++) {
      await settle(t)
      clock.advance(1_000)
    }
    await settle(t)
    const runs = await runsOf(t, p)
    assert.ok(runs.length > rounds, `${runs.length} runs`)
    assert.ok((await logOf(t, p)).every((l) => l.props.result !== 'loop'))
  })
})
