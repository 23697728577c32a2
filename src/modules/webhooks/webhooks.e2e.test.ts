import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Webhook } from 'standardwebhooks'
import { startTestApp } from '../../../test/helpers/app.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { addDomain, messagesOfBatch } from '../transactional/transactional.test-helpers.js'
import { createCampaign, listWith, sendingDomain } from '../campaigns/campaign-send.test-helpers.js'
import { startWebhookReceiver } from './webhook-receiver.test-helpers.js'

// At file level, so they close after the app.
const sink = await startSmtpSink()
const receiver = await startWebhookReceiver()

describe('webhook end to end', async () => {
  // The real worker runs: the transactional send job and the webhook delivery loop.
  const t = await startTestApp({ config: { smtpUrl: sink.url, allowPrivateNetwork: true } })
  const paid = await t.createAccount('paid')
  await addDomain(t, paid.id, 'shop.example')

  it('a transactional send reaches the receiver as a signed delivery event', async () => {
    const set = await t.req('POST', '/account/settings/webhook', {
      key: paid.key,
      body: { url: receiver.url('/tidings') },
    })
    assert.deepEqual(set.body, { success: true })
    const { secret } = (await t.req('GET', '/account/settings/webhook', { key: paid.key })).body as {
      secret: string
    }

    const res = await t.req('POST', '/transactional/send-message', {
      key: paid.key,
      body: {
        message: {
          subject: 'Your order',
          from_name: 'Shop',
          from_email: 'orders@shop.example',
          text: 'Thanks',
          to: [{ email: 'jana@example.cz' }],
        },
      },
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const batchId: number = res.body.results.id
    await sink.waitFor(1)

    const [hit] = await receiver.waitFor(1, '/tidings')
    assert.ok(hit)
    const payload = new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>) as {
      msys: { message_event: Record<string, unknown> }
    }[]
    assert.equal(hit.headers['x-messagesystems-batch-id'], hit.headers['webhook-id'])
    const [row] = await messagesOfBatch(t, batchId)
    const event = payload[0]?.msys.message_event
    assert.equal(event?.type, 'delivery')
    assert.equal(event?.rcpt_to, 'jana@example.cz')
    assert.equal(event?.subject, 'Your order')
    assert.equal(event?.message_id, String(row?.id))
    assert.equal(event?.transmission_id, String(batchId))
    assert.equal(typeof event?.event_id, 'string')
  })

  it("a campaign's delivery event carries the recipient's subject, its merge tags filled in", async () => {
    await sendingDomain(t, paid, 'letters.example')
    const list = await listWith(t, paid, [{ email: 'petr@example.cz', name: 'Petr' }])
    const id = await createCampaign(t, paid, [list], {
      subject: 'Hi *|name|*, news',
      from_email: 'news@letters.example',
    })
    assert.equal((await t.req('POST', `/campaigns/${id}/send`, { key: paid.key })).status, 200)
    const hits = await receiver.waitFor(2, '/tidings')
    const events = hits.flatMap((h) =>
      (JSON.parse(h.body) as { msys: { message_event: Record<string, unknown> } }[]).map(
        (e) => e.msys.message_event,
      ),
    )
    const delivery = events.find((e) => e.rcpt_to === 'petr@example.cz' && e.type === 'delivery')
    assert.equal(delivery?.subject, 'Hi Petr, news')
  })
})
