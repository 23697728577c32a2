import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startTestApp } from '../../../test/helpers/app.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { sendOrderMail } from '../../../test/helpers/transactional.js'
import {
  campaignRow,
  createCampaign,
  listWith,
  sendingDomain,
} from '../campaigns/campaign-send.test-helpers.js'
import { startCampaignSender } from '../../../test/helpers/sender.js'
import { waitFor } from '../../../test/helpers/wait-for.js'

const sink = await startSmtpSink()
const delivered = () => sink.messages.flatMap((m) => m.envelopeTo)

describe('sender: the end of a campaign does not hold body mail', async () => {
  const t = await startTestApp({ worker: false, config: { smtpUrl: sink.url, sendThreads: 0 } })
  const paid = await t.createAccount('paid')
  await sendingDomain(t, paid)
  const list = await listWith(t, paid, [{ email: 'reader1@example.cz' }, { email: 'reader2@example.cz' }])

  it('sends transactional mail while a lane makes sure the campaign is done', async () => {
    // Whether a campaign is done is read from its whole ledger (2-3 s at 1,000,000 rows): held open here.
    let entered = 0
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    const sender = startCampaignSender(t.ctx, {
      loop: true,
      campaigns: (real) => ({
        ...real,
        async finishIfDone(ex, id, now) {
          entered++
          await held
          return real.finishIfDone(ex, id, now)
        },
      }),
    })
    t.ctx.onClose(async () => {
      release()
      await sender.stop()
    })
    const id = await createCampaign(t, paid, [list], { from_email: 'news@shop.example' })
    assert.equal((await t.req('POST', `/campaigns/${id}/send`, { key: paid.key })).status, 200)
    await waitFor(() => delivered().length === 2, 10_000, 'the campaign’s two messages')
    await waitFor(() => entered > 0, 10_000, 'a lane checking whether the campaign is done')

    await sendOrderMail(t, paid.key, ['buyer@example.cz'])
    // The order mail goes out while the check is held.
    await waitFor(() => delivered().includes('buyer@example.cz'), 5_000, 'the order mail')
    assert.equal(entered, 1, 'one lane checks; the other sends body mail')
    assert.equal((await campaignRow(t, id))?.status, 2, 'the campaign is not done before its check ends')

    release()
    for (let i = 0; i < 100 && (await campaignRow(t, id))?.status !== 3; i++)
      await new Promise((r) => setTimeout(r, 50))
    assert.equal((await campaignRow(t, id))?.status, 3, 'then it is sent')
    assert.equal(delivered().length, 3)
  })
})
