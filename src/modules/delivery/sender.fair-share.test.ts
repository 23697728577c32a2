import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { queryOne } from '../../core/db/sql.js'
import {
  campaignRow,
  createCampaign,
  listWith,
  sendingDomain,
} from '../campaigns/campaign-send.test-helpers.js'
import { startCampaignSender } from '../../../test/helpers/sender.js'
import { sendOrderMail } from '../../../test/helpers/transactional.js'

const sink = await startSmtpSink()
const delivered = () => sink.messages.flatMap((m) => m.envelopeTo)

describe('sender: fair share between a big campaign and transactional mail', async () => {
  const t = await startTestApp({ worker: false, config: { smtpUrl: sink.url, sendThreads: 0 } })
  const paid = await t.createAccount('paid')
  await sendingDomain(t, paid)
  const people = Array.from({ length: 60 }, (_, i) => ({ email: `c${i}@example.cz` }))
  const list = await listWith(t, paid, people)
  // Rounds are driven by hand, in batches of 10: the campaign alone needs 6 rounds.
  const sender = startCampaignSender(t.ctx, { loop: false, batchSize: 10 })
  t.ctx.onClose(() => sender.stop())

  it('sends transactional mail in the next round, while most of the campaign still waits', async () => {
    const id = await createCampaign(t, paid, [list], { from_email: 'news@shop.example' })
    assert.equal((await t.req('POST', `/campaigns/${id}/send`, { key: paid.key })).status, 200)
    await sender.runOnce() // prepares, sends the campaign's first batch
    assert.equal(delivered().length, 10)
    const batch = await sendOrderMail(t, paid.key, ['buyer@example.cz', 'buyer2@example.cz'])
    assert.equal(await sender.runOnce(), 12, 'the transactional mail, then one campaign batch')
    const order = delivered()
    assert.deepEqual(order.slice(10, 12).sort(), ['buyer2@example.cz', 'buyer@example.cz'])
    const queued = await queryOne<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM messages WHERE campaign_id = ${id} AND status = 0`,
    )
    assert.equal(queued?.n, 40, 'the campaign goes on behind it')
    // Both rows were sent by the one sender and recorded like campaign mail: status 1 and a `send` event.
    const sent = await queryOne<{ n: number; events: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n,
                 (SELECT count(*)::int FROM events e WHERE e.message_id IN
                   (SELECT id FROM messages WHERE batch_id = ${batch}) AND e.event = 'send') AS events
          FROM messages WHERE batch_id = ${batch} AND status = 1`,
    )
    assert.deepEqual(sent, { n: 2, events: 2 })
    for (let i = 0; i < 10 && (await campaignRow(t, id))?.status !== 3; i++) await sender.runOnce()
    assert.equal((await campaignRow(t, id))?.status, 3)
    assert.equal(new Set(delivered()).size, 62)
  })
})
