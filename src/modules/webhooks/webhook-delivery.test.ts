import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { eq, sql } from 'drizzle-orm'
import { Webhook } from 'standardwebhooks'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { queryOne } from '../../core/db/sql.js'
import { createOutboundHttp } from '../../core/net/outbound.js'
import type { NewEvent } from '../events/index.js'
import { insertEvent } from '../outcomes/index.js'
import { messages } from '../messages/index.js'
import { claimDueBatches, formBatches } from './webhook-batches.repo.js'
import { createWebhookDeliverer } from './webhook-delivery.js'
import { enqueueWebhookEvents } from './webhook-events.js'
import { startWebhookReceiver, type Received } from './webhook-receiver.test-helpers.js'
import { RETRY_WINDOW_MS } from './retry-schedule.js'
import { webhookBatches } from './webhooks.table.js'

const receiver = await startWebhookReceiver()

interface MessageEvent {
  type: string
  event_id: string
  [k: string]: unknown
}
const eventsOf = (r: Received): MessageEvent[] =>
  (JSON.parse(r.body) as { msys: { message_event: MessageEvent } }[]).map((x) => x.msys.message_event)

describe('webhook delivery', async () => {
  const clock = new ManualClock()
  const t = await startTestApp({ worker: false, clock, config: { allowPrivateNetwork: true } })
  const PATH = '/account/settings/webhook'
  // Jitter fixed at the middle of its range: a failure after the first try waits 30 s × 0.75.
  const deliverer = createWebhookDeliverer(t.ctx, { timeoutMs: 300, random: () => 0.5 })

  /** A fresh account whose webhook points at `path` on the receiver; returns it and its secret. */
  async function accountWithHook(path: string) {
    const account = await t.createAccount()
    const res = await t.req('POST', PATH, { key: account.key, body: { url: receiver.url(path) } })
    assert.deepEqual(res.body, { success: true })
    const { secret } = (await t.req('GET', PATH, { key: account.key })).body as { secret: string }
    return { ...account, secret }
  }
  const event = (accountId: number, over: Partial<NewEvent> = {}): NewEvent => ({
    accountId,
    email: 'jana@example.cz',
    event: 'send',
    occurredAt: clock.now(),
    ...over,
  })
  const batches = (accountId: number) =>
    t.ctx.db.select().from(webhookBatches).where(eq(webhookBatches.accountId, accountId))
  const outboxCount = async (accountId: number) =>
    (await queryOne<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM webhook_outbox WHERE account_id = ${accountId}`,
    ))!.n

  it('delivers every event kind as msys.message_event, signed, in one batch', async () => {
    const a = await accountWithHook('/ok')
    const [msg] = await t.ctx.db
      .insert(messages)
      .values({
        accountId: a.id,
        kind: 'campaign',
        campaignId: 7,
        email: 'jana@example.cz',
        subject: 'Hello Jana',
      })
      .returning()
    const base = { messageId: msg!.id, campaignId: 7 }
    const at = new Date(Math.floor(clock.now().getTime() / 1000) * 1000)
    await t.ctx.db.transaction(async (tx) => {
      for (const e of [
        event(a.id, { ...base, event: 'send', occurredAt: at }),
        event(a.id, { ...base, event: 'hard_bounce', msg: '550 no such user' }),
        event(a.id, { ...base, event: 'soft_bounce', msg: '452 mailbox full' }),
        event(a.id, { ...base, event: 'out_of_band' }),
        event(a.id, { ...base, event: 'open' }),
        event(a.id, { ...base, event: 'click', url: 'https://shop.example/x' }),
        event(a.id, { ...base, event: 'spam_complaint', msg: 'abuse' }),
        event(a.id, { ...base, event: 'spam' }),
        event(a.id, { ...base, event: 'unsub', pipelineId: 3, actionId: 'a1' }),
      ])
        await insertEvent(tx, e)
    })
    const before = receiver.received.length
    const report = await deliverer.runOnce()
    assert.equal(report.delivered, 1)
    const [req] = receiver.received.slice(before)
    assert.ok(req)
    assert.equal(req.path, '/ok')
    assert.equal(req.headers['content-type'], 'application/json')
    const id = req.headers['webhook-id'] as string
    assert.match(id, /^msg_[0-9a-f]{32}$/)
    assert.equal(req.headers['x-messagesystems-batch-id'], id)
    // Verified independently, by the Standard Webhooks package, with the secret GET shows.
    const verified = new Webhook(a.secret).verify(req.body, req.headers as Record<string, string>)
    assert.ok(Array.isArray(verified))
    assert.throws(() =>
      new Webhook(a.secret).verify(req.body.replace('Jana', 'Eve'), req.headers as Record<string, string>),
    )

    const got = eventsOf(req)
    assert.deepEqual(
      got.map((e) => [e.type, e.bounce_class]),
      [
        ['delivery', undefined],
        ['bounce', '10'],
        ['bounce', '20'],
        ['bounce', '1'],
        ['open', undefined],
        ['click', undefined],
        ['spam_complaint', undefined],
        ['spam_complaint', undefined],
        ['list_unsubscribe', undefined],
      ],
    )
    assert.equal(new Set(got.map((e) => e.event_id)).size, got.length)
    const delivery = got[0]!
    assert.equal(delivery.timestamp, String(at.getTime() / 1000))
    assert.equal(delivery.message_id, String(msg!.id))
    assert.equal(delivery.rcpt_to, 'jana@example.cz')
    assert.equal(delivery.subject, 'Hello Jana')
    assert.equal(delivery.campaign_id, '7')
    assert.deepEqual(delivery.rcpt_meta, {
      campaign_id: '7',
      pipeline_id: null,
      pipeline_action_id: null,
      subaccount: 'Test marketer',
    })
    assert.equal(got[1]!.reason, '550 no such user')
    assert.equal(got[5]!.target_link_url, 'https://shop.example/x')
    assert.equal(got[6]!.fbtype, 'abuse')
    assert.deepEqual(got[8]!.rcpt_meta, {
      campaign_id: '7',
      pipeline_id: '3',
      pipeline_action_id: 'a1',
      subaccount: 'Test marketer',
    })
    assert.deepEqual(await batches(a.id), [])
  })

  it('queues nothing for an account without a webhook, or when the cause rolls back', async () => {
    const plain = await t.createAccount()
    await enqueueWebhookEvents(t.ctx.db, [event(plain.id), event(plain.id, { event: 'open' })])
    assert.equal(await outboxCount(plain.id), 0)
    const a = await accountWithHook('/ok')
    await assert.rejects(
      t.ctx.db.transaction(async (tx) => {
        await insertEvent(tx, event(a.id))
        throw new Error('the cause failed')
      }),
    )
    assert.equal(await outboxCount(a.id), 0)
    await insertEvent(t.ctx.db, event(a.id))
    assert.equal(await outboxCount(a.id), 1)
    await deliverer.runOnce()
    assert.equal(await outboxCount(a.id), 0)
  })

  it('sends many events as several batches of at most 100, none lost or doubled', async () => {
    const a = await accountWithHook('/many')
    await enqueueWebhookEvents(
      t.ctx.db,
      Array.from({ length: 250 }, (_, i) => event(a.id, { email: `r${i}@example.cz` })),
    )
    const report = await deliverer.runOnce()
    assert.equal(report.delivered, 3)
    const got = receiver.received.filter((r) => r.path === '/many').flatMap(eventsOf)
    assert.equal(got.length, 250)
    assert.equal(new Set(got.map((e) => e.rcpt_to)).size, 250)
    assert.deepEqual(
      receiver.received
        .filter((r) => r.path === '/many')
        .map((r) => eventsOf(r).length)
        .sort((x, y) => x - y),
      [50, 100, 100],
    )
  })

  it('retries a 500 with backoff, sending the same batch under the same id', async () => {
    const a = await accountWithHook('/flaky')
    receiver.script('/flaky', [{ status: 500 }, { status: 200 }])
    await enqueueWebhookEvents(t.ctx.db, [event(a.id)])
    assert.deepEqual(await deliverer.runOnce(), { delivered: 0, failed: 1, gone: 0, gaveUp: 0 })
    const [waiting] = await batches(a.id)
    assert.equal(waiting?.attempts, 1)
    assert.equal(waiting?.lastError, 'HTTP 500')
    assert.equal(waiting!.nextAttemptAt.getTime() - clock.now().getTime(), 22_500)
    // Not due yet: nothing is sent.
    await deliverer.runOnce()
    assert.equal(receiver.received.filter((r) => r.path === '/flaky').length, 1)
    clock.advance(22_500)
    assert.equal((await deliverer.runOnce()).delivered, 1)
    const [first, second] = receiver.received.filter((r) => r.path === '/flaky')
    assert.equal(second?.headers['webhook-id'], first?.headers['webhook-id'])
    assert.equal(second?.body, first?.body)
    new Webhook(a.secret).verify(second!.body, second!.headers as Record<string, string>)
    assert.deepEqual(await batches(a.id), [])
  })

  it('backs off exponentially with a 1 h cap for 24 h, then drops the batch', async () => {
    const a = await accountWithHook('/down')
    receiver.script('/down', [{ status: 503 }])
    await enqueueWebhookEvents(t.ctx.db, [event(a.id)])
    const start = clock.now().getTime()
    const waits: number[] = []
    let gaveUp = 0
    for (let i = 0; i < 100 && gaveUp === 0; i++) {
      const report = await deliverer.runOnce()
      gaveUp = report.gaveUp
      const [b] = await batches(a.id)
      if (!b) break
      waits.push(b.nextAttemptAt.getTime() - clock.now().getTime())
      clock.set(b.nextAttemptAt)
    }
    assert.equal(gaveUp, 1)
    assert.deepEqual(await batches(a.id), [])
    assert.deepEqual(
      waits.slice(0, 8),
      [22_500, 45_000, 90_000, 180_000, 360_000, 720_000, 1_440_000, 2_700_000],
    )
    assert.ok(waits.every((w) => w <= 2_700_000))
    // The last try falls exactly on the end of the 24 h window.
    assert.equal(clock.now().getTime() - start, RETRY_WINDOW_MS)
    const hits = receiver.received.filter((r) => r.path === '/down')
    assert.equal(hits.length, waits.length + 1)
    assert.equal(new Set(hits.map((h) => h.headers['webhook-id'])).size, 1)
  })

  it('honours Retry-After', async () => {
    const a = await accountWithHook('/busy')
    receiver.script('/busy', [{ status: 429, headers: { 'retry-after': '3600' } }])
    await enqueueWebhookEvents(t.ctx.db, [event(a.id)])
    await deliverer.runOnce()
    const [b] = await batches(a.id)
    assert.equal(b!.nextAttemptAt.getTime() - clock.now().getTime(), 3_600_000)
  })

  it('does not follow a redirect: a 3xx is a failure to retry', async () => {
    const a = await accountWithHook('/moved')
    receiver.script('/moved', [{ status: 302, headers: { location: '/ok-moved' } }])
    await enqueueWebhookEvents(t.ctx.db, [event(a.id)])
    assert.equal((await deliverer.runOnce()).failed, 1)
    assert.equal(receiver.received.filter((r) => r.path === '/moved').length, 1)
    assert.equal(receiver.received.filter((r) => r.path === '/ok-moved').length, 0)
    assert.equal((await batches(a.id))[0]?.lastError, 'HTTP 302')
  })

  it('gives up on a receiver that never answers at the time-out and retries later', async () => {
    const a = await accountWithHook('/never')
    receiver.script('/never', ['hang'])
    await enqueueWebhookEvents(t.ctx.db, [event(a.id)])
    assert.equal((await deliverer.runOnce()).failed, 1)
    const [b] = await batches(a.id)
    assert.match(b?.lastError ?? '', /no complete answer within 300 ms/)
    assert.equal(b?.attempts, 1)
  })

  it("holds more deliveries than Node's ten listeners of a signal in flight without a leak warning", async () => {
    const warnings: string[] = []
    const onWarning = (w: Error) => warnings.push(w.name)
    process.on('warning', onWarning)
    try {
      const accounts = []
      for (let i = 0; i < 12; i++) accounts.push(await accountWithHook(`/held-${i}`))
      for (const [i, a] of accounts.entries()) {
        receiver.script(`/held-${i}`, ['hang'])
        await enqueueWebhookEvents(t.ctx.db, [event(a.id)])
      }
      assert.equal((await deliverer.runOnce()).failed, 12)
      // Warnings are emitted on the next tick.
      await new Promise((r) => setImmediate(r))
    } finally {
      process.off('warning', onWarning)
    }
    assert.deepEqual(warnings, [])
  })

  it('stops on 410 Gone: the webhook is disabled, pending events dropped, until the URL is posted again', async () => {
    const a = await accountWithHook('/gone')
    receiver.script('/gone', [{ status: 410 }])
    await enqueueWebhookEvents(t.ctx.db, [event(a.id)])
    assert.equal((await deliverer.runOnce()).gone, 1)
    assert.deepEqual(await batches(a.id), [])
    const shown = (await t.req('GET', PATH, { key: a.key })).body
    assert.equal(shown.active, false)
    assert.equal(shown.url, receiver.url('/gone'))
    await enqueueWebhookEvents(t.ctx.db, [event(a.id)])
    assert.equal(await outboxCount(a.id), 0)
    await t.req('POST', PATH, { key: a.key, body: { url: receiver.url('/gone') } })
    assert.equal((await t.req('GET', PATH, { key: a.key })).body.active, true)
    await enqueueWebhookEvents(t.ctx.db, [event(a.id)])
    assert.equal(await outboxCount(a.id), 1)
  })

  it('drops what waited when the webhook is removed', async () => {
    const a = await accountWithHook('/removed')
    receiver.script('/removed', [{ status: 500 }])
    await enqueueWebhookEvents(t.ctx.db, [event(a.id)])
    await deliverer.runOnce()
    await enqueueWebhookEvents(t.ctx.db, [event(a.id)])
    await t.req('DELETE', PATH, { key: a.key })
    assert.deepEqual(await batches(a.id), [])
    assert.equal(await outboxCount(a.id), 0)
  })

  it('delivers what a crashed worker left: after the commit, and mid-send under the same id', async () => {
    // Back to real time (an earlier test played 24 h), so the signature's timestamp is fresh for verify().
    clock.set(new Date())
    const a = await accountWithHook('/crash')
    // Committed, then the process died before any worker ran: the outbox still holds the event.
    await insertEvent(t.ctx.db, event(a.id))
    assert.equal(await outboxCount(a.id), 1)
    // A worker then formed the batch and claimed it, exactly as a round does, and died before the answer.
    await formBatches(t.ctx.db, clock.now(), 1000, 100)
    const lease = new Date(clock.now().getTime() + 70_000)
    assert.equal((await claimDueBatches(t.ctx.db, clock.now(), lease, 10)).length, 1)
    const pending = await batches(a.id)
    assert.equal(pending.length, 1)
    const id = pending[0]!.id
    // Leased: a second worker leaves it alone until the lease runs out.
    const second = createWebhookDeliverer(t.ctx, { timeoutMs: 300 })
    assert.equal((await second.runOnce()).delivered, 0)
    clock.advance(70_000)
    assert.equal((await second.runOnce()).delivered, 1)
    const [hit] = receiver.received.filter((r) => r.path === '/crash')
    assert.equal(hit?.headers['webhook-id'], id)
    new Webhook(a.secret).verify(hit!.body, hit!.headers as Record<string, string>)
  })

  it('refuses to dial a private receiver without ALLOW_PRIVATE_NETWORK, and says why', async () => {
    const a = await accountWithHook('/private')
    const strict = createWebhookDeliverer(t.ctx, {
      timeoutMs: 300,
      random: () => 0.5,
      http: createOutboundHttp({ allowPrivateNetwork: false }),
    })
    await enqueueWebhookEvents(t.ctx.db, [event(a.id)])
    assert.equal((await strict.runOnce()).failed, 1)
    assert.equal(receiver.received.filter((r) => r.path === '/private').length, 0)
    const [b] = await batches(a.id)
    assert.match(b?.lastError ?? '', /loopback/)
  })
})
