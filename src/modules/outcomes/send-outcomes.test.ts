import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { startCampaignSender } from '../../../test/helpers/sender.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { queryRows } from '../../core/db/sql.js'
import { addDomain } from '../transactional/transactional.test-helpers.js'
import { sendOrderMail } from '../../../test/helpers/transactional.js'

const sink = await startSmtpSink()

describe('send events and the webhook outbox', async () => {
  const t = await startTestApp({
    worker: false,
    config: { smtpUrl: sink.url, sendThreads: 0, allowPrivateNetwork: true },
  })
  const hooked = await t.createAccount('paid')
  const plain = await t.createAccount('paid')
  await addDomain(t, hooked.id, 'hooked.example')
  await addDomain(t, plain.id, 'plain.example')
  const sender = startCampaignSender(t.ctx, { loop: false, batchSize: 10 })
  t.ctx.onClose(() => sender.stop())

  it('queues the send events of accounts with a webhook only, from a batch of both', async () => {
    const set = await t.req('POST', '/account/settings/webhook', {
      key: hooked.key,
      body: { url: 'http://127.0.0.1:9/hook' },
    })
    assert.equal(set.status, 200, set.text)
    const send = (key: string, domain: string, to: string[]) => sendOrderMail(t, key, to, { domain })
    // Interleaved, so that one claimed batch holds both accounts' rows.
    await send(hooked.key, 'hooked.example', ['a1@example.cz', 'a2@example.cz'])
    await send(plain.key, 'plain.example', ['b1@example.cz', 'b2@example.cz', 'b3@example.cz'])
    await send(hooked.key, 'hooked.example', ['a3@example.cz'])
    assert.equal(await sender.runOnce(), 6)
    assert.equal(sink.messages.length, 6)

    const events = await queryRows<{ account_id: number; email: string }>(
      t.ctx.db,
      sql`SELECT account_id, email FROM events WHERE event = 'send' ORDER BY email`,
    )
    assert.deepEqual(
      events.map((e) => e.email),
      ['a1@example.cz', 'a2@example.cz', 'a3@example.cz', 'b1@example.cz', 'b2@example.cz', 'b3@example.cz'],
      'every message has its send event, webhook or not',
    )
    const outbox = await queryRows<{ account_id: number; rcpt: string; type: string }>(
      t.ctx.db,
      sql`SELECT account_id, payload ->> 'rcpt_to' AS rcpt, payload ->> 'type' AS type
          FROM webhook_outbox ORDER BY payload ->> 'rcpt_to'`,
    )
    assert.deepEqual(outbox, [
      { account_id: hooked.id, rcpt: 'a1@example.cz', type: 'delivery' },
      { account_id: hooked.id, rcpt: 'a2@example.cz', type: 'delivery' },
      { account_id: hooked.id, rcpt: 'a3@example.cz', type: 'delivery' },
    ])
  })
})
