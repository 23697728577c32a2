import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startTestApp } from '../../../test/helpers/app.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { startCampaignSender } from '../../../test/helpers/sender.js'
import {
  campaignRow,
  createCampaign,
  listWith,
  sendingDomain,
} from '../campaigns/campaign-send.test-helpers.js'

// One slow recipient: the relay holds its message for 3 s, three times the lease, while the rest of its batch
// was sent at once and waits to be marked with it.
const SLOW = 'c3@example.cz'
const sink = await startSmtpSink({ dataDelayMs: (to) => (to === SLOW ? 3000 : 0) })

describe('sender: the lease of a batch being relayed', async () => {
  const t = await startTestApp({
    worker: false,
    config: { smtpUrl: sink.url, sendThreads: 0, sendLeaseSeconds: 1 },
  })
  const paid = await t.createAccount('paid')
  await sendingDomain(t, paid)
  const people = Array.from({ length: 20 }, (_, i) => ({ email: `c${i}@example.cz` }))
  const list = await listWith(t, paid, people)

  it('holds the rows already sent until they are marked: no other lane claims and sends them again', async () => {
    // The sender's own loop: two lanes of 5 rows each.
    const sender = startCampaignSender(t.ctx, { batchSize: 10 })
    try {
      const id = await createCampaign(t, paid, [list], { from_email: 'news@shop.example' })
      assert.equal((await t.req('POST', `/campaigns/${id}/send`, { key: paid.key })).status, 200)
      await sink.waitFor(20, 20_000)
      for (let i = 0; i < 100 && (await campaignRow(t, id))?.status !== 3; i++)
        await new Promise((r) => setTimeout(r, 100))
      assert.equal((await campaignRow(t, id))?.status, 3, 'the campaign finished')
      // A lane whose claim ran out under it would have been sent again by the other lane by now.
      await new Promise((r) => setTimeout(r, 1500))
    } finally {
      await sender.stop()
    }
    const sent = sink.messages.flatMap((m) => m.envelopeTo)
    assert.equal(sent.length, 20, `each recipient once: ${sent.sort().join(' ')}`)
    assert.equal(new Set(sent).size, 20)
  })
})
