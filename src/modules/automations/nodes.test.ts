import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Webhook } from 'standardwebhooks'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { startWebhookReceiver } from '../webhooks/webhook-receiver.test-helpers.js'
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
import { pickVariant } from './nodes.js'

const sink = await startSmtpSink()
const receiver = await startWebhookReceiver()

describe('automation node types', async () => {
  const { t, clock } = await startAutomationApp(sink, {
    allowPrivateNetwork: true,
    smsGatewayUrl: receiver.url('/sms'),
  })
  const listId = await createList(t)
  const subscriber = async (email: string) => {
    const res = await t.req('GET', `/subscribers/${encodeURIComponent(email)}`)
    return res.body.subscriber ?? res.body
  }

  it('tag, untag, edit, subscribe, unsubscribe, note and end change the subscriber as the API reads it', async () => {
    const other = await createList(t, { name: 'Other' })
    const leave = await createList(t, { name: 'Leave' })
    const p = await createPipeline(t, listId, [
      node('a', 'tag', { tag: 'gold' }, ['b']),
      node('b', 'untag', { tag: 'old' }, ['c']),
      // `name` under custom_fields is a custom field of that name, not the person's name.
      node('c', 'edit', { fields: { city: 'Brno', shoe: '42', custom_fields: { name: 'nick' } } }, ['d']),
      node('d', 'subscribe', { list_id: other }, ['u']),
      node('u', 'unsubscribe', { list_id: leave }, ['n']),
      node('n', 'note', { text: 'just a note' }, ['e']),
      node('e', 'end'),
    ])
    await subscribe(t, leave, 'fx@example.cz', {}, { trigger_autoresponders: false })
    await subscribe(t, listId, 'fx@example.cz', { tags: ['old', 'keep'] }, { update_existing: true })
    await settle(t)
    const s = await subscriber('fx@example.cz')
    assert.deepEqual(s.tags, ['keep', 'gold'])
    assert.equal(s.city, 'Brno')
    assert.equal(s.custom_fields.shoe, '42')
    assert.equal(s.custom_fields.name, 'nick')
    assert.equal(s.name, '')
    assert.equal(s.lists[String(other)].status, 1)
    assert.equal(s.lists[String(leave)].status, 2)
    const log = await logOf(t, p)
    assert.deepEqual(
      log.map((l) => [l.action_id, l.props.type]),
      [
        ['a', 'tag'],
        ['b', 'untag'],
        ['c', 'edit'],
        ['d', 'subscribe'],
        ['u', 'unsubscribe'],
        ['n', 'note'],
        ['e', 'end'],
      ],
    )
    assert.equal((await runsOf(t, p))[0]!.end_reason, 'end node')
  })

  it("edit: null clears a field (to '' where the column holds no null), and the run goes on", async () => {
    const p = await createPipeline(
      t,
      listId,
      [
        node('c', 'edit', { fields: { name: null, city: null, company: null, shoe: null } }, ['e']),
        node('e', 'end'),
      ],
      { trigger: { type: 'api' } },
    )
    await subscribe(
      t,
      listId,
      'clear@example.cz',
      { name: 'Jana', city: 'Brno', company: 'ACME' },
      { trigger_autoresponders: false },
    )
    await t.req('POST', `/pipelines/${p}/trigger`, { body: { email: 'clear@example.cz' } })
    await settle(t)
    const s = await subscriber('clear@example.cz')
    assert.deepEqual([s.name, s.city, s.company], ['', '', null])
    assert.equal(s.custom_fields.shoe, null)
    assert.deepEqual(
      (await logOf(t, p)).map((l) => l.action_id),
      ['c', 'e'],
    )
    assert.equal((await runsOf(t, p))[0]!.end_reason, 'end node')
  })

  it('edit: a node saved before its fields were checked writes them by their names in lower case, the last of two standing', async () => {
    // Written straight to the table, as an earlier version stored it (saving it today lower-cases the names).
    const own = await createList(t, { name: 'Legacy' })
    const p = await createPipeline(
      t,
      own,
      [
        node(
          'c',
          'edit',
          { fields: { CITY: 'Brno', ' City ': 'Ostrava', Favourite: 'tea', custom_fields: { Size: 'M' } } },
          ['e'],
        ),
        node('e', 'end'),
      ],
      { trigger: { type: 'api' } },
    )
    await subscribe(t, own, 'legacy@example.cz', { custom_fields: { favourite: 'coffee' } })
    await t.req('POST', `/pipelines/${p}/trigger`, { body: { email: 'legacy@example.cz' } })
    await settle(t)
    const s = await subscriber('legacy@example.cz')
    assert.equal(s.city, 'Ostrava')
    assert.deepEqual(s.custom_fields, { favourite: 'tea', size: 'M' })
  })

  it('split sends each run down one variant, chosen from the run id', async () => {
    const p = await createPipeline(
      t,
      listId,
      [
        node('s', 'split', { variants: { a: 1, b: 1 } }, { a: ['ta'], b: ['tb'] }),
        node('ta', 'tag', { tag: 'variant-a' }),
        node('tb', 'tag', { tag: 'variant-b' }),
      ],
      { trigger: { type: 'api' } },
    )
    const emails = ['s1@example.cz', 's2@example.cz', 's3@example.cz', 's4@example.cz']
    for (const e of emails) {
      await subscribe(t, listId, e, {}, { trigger_autoresponders: false })
      await t.req('POST', `/pipelines/${p}/trigger`, { body: { email: e } })
    }
    await settle(t)
    for (const r of await runsOf(t, p)) {
      const variant = pickVariant(r.id, { a: 1, b: 1 })
      assert.deepEqual(await tagsOf(t, r.email), [`variant-${variant}`])
      assert.equal(r.end_reason, 'end of branch')
    }
    assert.equal(pickVariant(7, { a: 1, b: 0 }), 'a')
  })

  it('webhook: signed like the account webhook, retried later at the same node, then on', async () => {
    await t.req('POST', '/account/settings/webhook', { body: { url: receiver.url('/account') } })
    const secret = (await t.req('GET', '/account/settings/webhook')).body.secret as string
    receiver.script('/hook', [{ status: 500 }, { status: 200 }])
    const p = await createPipeline(
      t,
      listId,
      [
        node('w', 'webhook', { url: receiver.url('/hook'), headers: { 'x-extra': 'yes' } }, ['t']),
        node('t', 'tag', { tag: 'hooked' }),
      ],
      { trigger: { type: 'api' } },
    )
    await subscribe(t, listId, 'hook@example.cz', {}, { trigger_autoresponders: false })
    const run = await t.req('POST', `/pipelines/${p}/trigger`, { body: { email: 'hook@example.cz' } })
    await settle(t)
    assert.equal(receiver.received.filter((r) => r.path === '/hook').length, 1)
    assert.deepEqual(await logOf(t, p), [], 'no entry while retrying')
    clock.advance(31_000)
    await settle(t)
    const calls = receiver.received.filter((r) => r.path === '/hook')
    assert.equal(calls.length, 2)
    const body = JSON.parse(calls[1]!.body)
    assert.deepEqual(body, {
      email: 'hook@example.cz',
      pipeline_id: p,
      action_id: 'w',
      trigger_id: run.body.trigger_id,
    })
    assert.equal(calls[1]!.headers['x-extra'], 'yes')
    assert.equal(calls[0]!.headers['webhook-id'], calls[1]!.headers['webhook-id'])
    const h = calls[1]!.headers as Record<string, string>
    // Signed at the engine's clock (a test clock here), so checked against its own timestamp.
    const signed = new Webhook(secret).sign(
      h['webhook-id']!,
      new Date(Number(h['webhook-timestamp']) * 1000),
      calls[1]!.body,
    )
    assert.equal(h['webhook-signature'], signed)
    const log = await logOf(t, p)
    assert.deepEqual(
      log.map((l) => [l.action_id, l.props.status, l.props.tries]),
      [
        ['w', 200, 2],
        ['t', undefined, undefined],
      ],
    )
    assert.deepEqual(await tagsOf(t, 'hook@example.cz'), ['hooked'])
  })

  it('webhook: sent with the method the node names (GET without a body)', async () => {
    const p = await createPipeline(
      t,
      listId,
      [
        node('g', 'webhook', { url: receiver.url('/by-get'), method: 'get' }, ['d']),
        node('d', 'webhook', { url: receiver.url('/by-delete'), method: 'DELETE' }, ['p']),
        // A body of its own with its own Content-Type (any case), and a signature header it may not forge.
        node('p', 'webhook', {
          url: receiver.url('/by-patch'),
          method: 'PATCH',
          body: 'patched',
          headers: { 'Content-Type': 'text/plain', 'Webhook-Signature': 'forged', 'Webhook-Token': 't0k' },
        }),
      ],
      { trigger: { type: 'api' } },
    )
    await subscribe(t, listId, 'method@example.cz', {}, { trigger_autoresponders: false })
    await t.req('POST', `/pipelines/${p}/trigger`, { body: { email: 'method@example.cz' } })
    await settle(t)
    const seen = receiver.received
      .filter((r) => r.path.startsWith('/by-'))
      .map((r) => [r.path, r.method, r.body.length > 0])
    assert.deepEqual(seen, [
      ['/by-get', 'GET', false],
      ['/by-delete', 'DELETE', true],
      ['/by-patch', 'PATCH', true],
    ])
    const patch = receiver.received.find((r) => r.path === '/by-patch')!.headers
    assert.equal(patch['content-type'], 'text/plain')
    assert.notEqual(patch['webhook-signature'], 'forged')
    // A header of the receiver's own that only looks like ours goes through.
    assert.equal(patch['webhook-token'], 't0k')
    assert.equal(
      receiver.received.find((r) => r.path === '/by-delete')!.headers['content-type'],
      'application/json',
    )
  })

  it('sms posts to the gateway; trigger starts another pipeline for the same subscriber', async () => {
    const target = await createPipeline(t, listId, [node('x', 'tag', { tag: 'from-trigger' })], {
      trigger: { type: 'api' },
    })
    const p = await createPipeline(
      t,
      listId,
      [node('s', 'sms', { text: 'Hi there' }, ['tr']), node('tr', 'trigger', { pipeline_id: target })],
      { trigger: { type: 'api' } },
    )
    await subscribe(
      t,
      listId,
      'sms@example.cz',
      { phone: '+420777111222' },
      { trigger_autoresponders: false },
    )
    await t.req('POST', `/pipelines/${p}/trigger`, { body: { email: 'sms@example.cz' } })
    await settle(t)
    const [call] = receiver.received.filter((r) => r.path === '/sms')
    assert.deepEqual(JSON.parse(call!.body), {
      to: '+420777111222',
      text: 'Hi there',
      email: 'sms@example.cz',
      pipeline_id: p,
      action_id: 's',
    })
    const log = await logOf(t, p)
    assert.equal(log[0]!.props.sent, true)
    assert.equal(log[1]!.props.result, 'started')
    assert.deepEqual(await tagsOf(t, 'sms@example.cz'), ['from-trigger'])
  })

  it('goal: a run meeting the condition jumps to it; one reaching it waits until met or timed out', async () => {
    const tpl = await createTemplate(t, '<p>Buy now</p>', 'Buy now')
    const listId = await createList(t, { name: 'Goals' })
    const p = await createPipeline(t, listId, [
      node('w', 'wait', { value: 2, unit: 'days' }, ['m']),
      node('m', 'mail', { template: tpl }, { default: ['g'] }),
      node('g', 'goal', { condition: { tag: 'bought' }, timeout: { value: 5, unit: 'days' } }, ['t']),
      node('t', 'tag', { tag: 'after-goal' }),
    ])
    await subscribe(t, listId, 'goal1@example.cz')
    await subscribe(t, listId, 'goal2@example.cz')
    await subscribe(t, listId, 'goal3@example.cz')
    await settle(t)
    // goal1 buys during the wait: it skips the mail and reaches the goal.
    await t.req('PUT', `/lists/${listId}/update-subscriber`, {
      body: { email: 'goal1@example.cz', subscriber_data: { tags: ['bought'] } },
    })
    clock.advance(2 * DAY + 1000)
    await settle(t)
    assert.deepEqual(await tagsOf(t, 'goal1@example.cz'), ['bought', 'after-goal'])
    await mailsTo(sink, 'goal2@example.cz', 1)
    assert.equal(sink.messages.filter((m) => m.envelopeTo.includes('goal1@example.cz')).length, 0)
    // goal2 buys while waiting at the goal; goal3 never does and times out after 5 days.
    await t.req('PUT', `/lists/${listId}/update-subscriber`, {
      body: { email: 'goal2@example.cz', subscriber_data: { tags: ['bought'] } },
    })
    clock.advance(61_000)
    await settle(t)
    assert.deepEqual(await tagsOf(t, 'goal2@example.cz'), ['bought', 'after-goal'])
    assert.deepEqual(await tagsOf(t, 'goal3@example.cz'), [])
    clock.advance(5 * DAY)
    await settle(t)
    assert.deepEqual(await tagsOf(t, 'goal3@example.cz'), ['after-goal'])
    const goals = (await logOf(t, p)).filter((l) => l.action_id === 'g').map((l) => l.props.goal)
    assert.deepEqual(goals.sort(), ['met', 'met', 'timeout'])
  })

  it('nodes in a cycle start afresh on each visit: a goal waits its whole timeout, a webhook gets its tries', async () => {
    receiver.script('/cycle', [{ status: 500 }])
    const listId = await createList(t, { name: 'Cycles' })
    const p = await createPipeline(
      t,
      listId,
      [
        node('g', 'goal', { condition: { tag: 'never' }, timeout: { value: 1, unit: 'minutes' } }, ['h']),
        node('h', 'webhook', { url: receiver.url('/cycle') }, ['w']),
        node('w', 'wait', { value: 10, unit: 'minutes' }, ['g']),
      ],
      { trigger: { type: 'api' } },
    )
    await subscribe(t, listId, 'cycle@example.cz', {}, { trigger_autoresponders: false })
    await t.req('POST', `/pipelines/${p}/trigger`, { body: { email: 'cycle@example.cz' } })
    await settle(t)
    // The goal times out after a minute; the webhook fails five times (retried after 30, 60, 120, 240 s).
    for (const ms of [61_000, 31_000, 61_000, 121_000, 241_000]) {
      clock.advance(ms)
      await settle(t)
    }
    const calls = () => receiver.received.filter((r) => r.path === '/cycle').length
    assert.equal(calls(), 5)
    const steps = async () =>
      (await logOf(t, p)).map((l) => [l.action_id, l.props.goal ?? l.props.tries ?? null])
    assert.deepEqual(await steps(), [
      ['g', 'timeout'],
      ['h', 5],
      ['w', null],
    ])
    // Back at the goal after the wait: it waits a whole minute again, then the webhook starts its tries anew.
    clock.advance(601_000)
    await settle(t)
    assert.equal((await steps()).length, 3, 'the goal waits again')
    clock.advance(61_000)
    await settle(t)
    assert.equal(calls(), 6)
    assert.deepEqual((await steps()).slice(3), [['g', 'timeout']], 'the webhook stays for its retries')
  })

  it('goal jumps are decided for the whole group of due runs at once: each run jumps exactly when met', async () => {
    const listId = await createList(t, { name: 'Goal jumps' })
    const p = await createPipeline(t, listId, [
      node('w', 'wait', { value: 1, unit: 'days' }, ['x']),
      node('x', 'tag', { tag: 'walked' }, ['e']),
      node('e', 'end'),
      node('ga', 'goal', { condition: { tag: 'a' } }, ['ea']),
      node('ea', 'end'),
      node('gb', 'goal', { condition: { tag: 'b' } }, ['eb']),
      node('eb', 'end'),
    ])
    const tags: Record<string, string[]> = {
      'j0@example.cz': [],
      'j1@example.cz': ['a'],
      'j2@example.cz': ['b'],
      'j3@example.cz': ['a', 'b'],
      'j4@example.cz': ['c'],
    }
    for (const email of Object.keys(tags)) await subscribe(t, listId, email)
    await settle(t)
    // All five wait at x, due together: one group, one condition statement per goal.
    assert.deepEqual(
      (await runsOf(t, p)).map((r) => r.node_id),
      ['x', 'x', 'x', 'x', 'x'],
    )
    for (const [email, given] of Object.entries(tags))
      if (given.length)
        await t.req('PUT', `/lists/${listId}/update-subscriber`, {
          body: { email, subscriber_data: { tags: given } },
        })
    clock.advance(DAY + 1000)
    await settle(t)
    const paths = new Map<string, string[]>()
    for (const l of await logOf(t, p)) {
      const email = (await runsOf(t, p)).find((r) => r.id === l.run_id)!.email
      paths.set(email, [...(paths.get(email) ?? []), l.action_id])
    }
    assert.deepEqual(Object.fromEntries(paths), {
      'j0@example.cz': ['w', 'x', 'e'],
      'j1@example.cz': ['w', 'ga', 'ea'],
      'j2@example.cz': ['w', 'gb', 'eb'],
      // Both met: the first goal in graph order, then (from its end node) the other one, each once.
      'j3@example.cz': ['w', 'ga', 'gb', 'eb'],
      'j4@example.cz': ['w', 'x', 'e'],
    })
    assert.deepEqual(await tagsOf(t, 'j0@example.cz'), ['walked'])
    assert.deepEqual(await tagsOf(t, 'j1@example.cz'), ['a'])
  })

  it('several ids in one port fork the run: each branch runs its path once, logged under the one trigger', async () => {
    const listId = await createList(t, { name: 'Branches' })
    const p = await createPipeline(t, listId, [
      node('s', 'tag', { tag: 'start' }, ['a', 'b']),
      node('a', 'tag', { tag: 'A' }, ['ea']),
      node('ea', 'end'),
      node('b', 'wait', { value: 1, unit: 'days' }, ['tb']),
      node('tb', 'tag', { tag: 'B' }, ['eb']),
      node('eb', 'end'),
    ])
    await subscribe(t, listId, 'fork@example.cz')
    await settle(t)
    const stats = async () =>
      (await t.req('GET', `/pipelines/${p}/stats`)).body.stats as Record<string, number>
    let runs = await runsOf(t, p)
    assert.deepEqual(
      runs.map((r) => [r.status, r.node_id]),
      [
        ['ended', 'ea'],
        ['active', 'tb'],
      ],
    )
    // One trigger, not yet ended: a branch is still waiting.
    assert.deepEqual([(await stats()).triggered, (await stats()).ended], [1, 0])
    clock.advance(DAY + 1000)
    await settle(t)
    assert.deepEqual(await tagsOf(t, 'fork@example.cz'), ['start', 'A', 'B'])
    runs = await runsOf(t, p)
    assert.deepEqual(
      runs.map((r) => r.status),
      ['ended', 'ended'],
    )
    const log = await logOf(t, p)
    // Each node once (the two branches' entries interleave in any order).
    assert.deepEqual(log.map((l) => [l.action_id, l.next]).sort(), [
      ['a', ['ea']],
      ['b', ['tb']],
      ['ea', null],
      ['eb', null],
      ['s', ['a', 'b']],
      ['tb', ['eb']],
    ])
    // Every entry carries the trigger's id (the first run), whichever branch wrote it.
    assert.deepEqual([...new Set(log.map((l) => l.run_id))], [runs[0]!.id])
    assert.deepEqual([(await stats()).triggered, (await stats()).ended], [1, 1])
  })

  it("branches share their trigger's goals: one jumps, the others end; none goes on down its old path", async () => {
    const listId = await createList(t, { name: 'Branch goals' })
    const graph = (second: number) => [
      node('s', 'note', {}, ['w1', 'w2']),
      node('w1', 'wait', { value: 1, unit: 'days' }, ['m1']),
      node('m1', 'tag', { tag: 'reminder1' }, ['e1']),
      node('e1', 'end'),
      node('w2', 'wait', { value: second, unit: 'days' }, ['m2']),
      node('m2', 'tag', { tag: 'reminder2' }, ['e2']),
      node('e2', 'end'),
      node('g', 'goal', { condition: { tag: 'bought' } }, ['tg']),
      node('tg', 'tag', { tag: 'after-goal' }, ['eg']),
      node('eg', 'end'),
    ]
    // Waits of one and two days: the later branch finds the goal met by the other and ends.
    const later = await createPipeline(t, listId, graph(2))
    // Equal waits: both branches meet the goal at once; one jumps.
    const together = await createPipeline(t, listId, graph(1))
    await subscribe(t, listId, 'branchgoal@example.cz')
    await settle(t)
    await t.req('PUT', `/lists/${listId}/update-subscriber`, {
      body: { email: 'branchgoal@example.cz', subscriber_data: { tags: ['bought'] } },
    })
    clock.advance(DAY + 1000)
    await settle(t)
    clock.advance(DAY)
    await settle(t)
    assert.deepEqual(await tagsOf(t, 'branchgoal@example.cz'), ['bought', 'after-goal'])
    for (const p of [later, together]) {
      const log = await logOf(t, p)
      assert.deepEqual(
        log
          .filter((l) => ['g', 'tg', 'eg', 'm1', 'm2'].includes(l.action_id) && !l.props.ended)
          .map((l) => l.action_id),
        ['g', 'tg', 'eg'],
        `pipeline ${p}`,
      )
      // The other branch ends where it stood (logged there), its reminder not executed.
      const cut = log.filter((l) => l.props.ended === 'goal met in another branch')
      assert.equal(cut.length, 1, `pipeline ${p}`)
      assert.ok(['m1', 'm2'].includes(cut[0]!.action_id), `pipeline ${p}`)
      const runs = await runsOf(t, p)
      assert.deepEqual(
        runs.map((r) => r.status),
        ['ended', 'ended'],
      )
      const stats = (await t.req('GET', `/pipelines/${p}/stats`)).body.stats as Record<string, number>
      assert.deepEqual([stats.triggered, stats.ended], [1, 1])
    }
  })

  it("mail: a coupon folder with no code left sends the tag empty and says so in the mail node's log entry", async () => {
    const folder = (await t.req('POST', '/coupons/folders', { body: { name: 'Empty' } })).body.id as number
    const list = await createList(t, { name: 'Coupons' })
    const tpl = await createTemplate(t, `<p>Code: [*|COUPON:${folder}|*]</p>`, 'Your code')
    await createPipeline(t, list, [node('m', 'mail', { template: tpl }, ['e']), node('e', 'end')])
    await subscribe(t, list, 'dry@example.cz')
    await settle(t)
    const [mail] = await mailsTo(sink, 'dry@example.cz', 1)
    assert.match(String(mail!.parsed.html), /Code: \[\]/)
    const log = (await t.req('GET', '/subscribers/dry@example.cz/automation-log')).body.automation_log as {
      action_id: string
      props: Record<string, unknown>
    }[]
    const entry = log.find((l) => l.action_id === 'm')
    assert.equal(
      entry?.props.note,
      `No coupon code was left in folder ${folder}: the coupon tag rendered empty.`,
    )
    assert.equal(log.find((l) => l.action_id === 'e')?.props.note, undefined)
  })
})
