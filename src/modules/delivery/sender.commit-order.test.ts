/**
 * Body rows are written by concurrent transactions, which commit out of id order: a row that becomes visible
 * after a higher one was claimed lies behind the sender's cursor, and still goes out while traffic goes on.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { startCampaignSender } from '../../../test/helpers/sender.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { sendOrderMail } from '../../../test/helpers/transactional.js'
import { addDomain } from '../transactional/transactional.test-helpers.js'

const sink = await startSmtpSink()
const delivered = (email: string) => sink.messages.some((m) => m.envelopeTo.includes(email))

describe('sender: a body row committed behind the cursor', async () => {
  const t = await startTestApp({ worker: false, config: { smtpUrl: sink.url, sendThreads: 0 } })
  const shop = await t.createAccount('paid')
  await addDomain(t, shop.id, 'shop.example')
  const sender = startCampaignSender(t.ctx, { loop: false })
  t.ctx.onClose(() => sender.stop())
  /** Takes the row out of the queue and puts it back: as if its transaction had not committed yet, then did. */
  const setStatus = (email: string, status: number) =>
    t.ctx.db.execute(sql`UPDATE messages SET status = ${status} WHERE email = ${email}`)

  it('is sent while new mail keeps every claim busy, not only once a claim comes back empty', async () => {
    await sendOrderMail(t, shop.key, ['late@example.cz'])
    await setStatus('late@example.cz', 5)
    await sendOrderMail(t, shop.key, ['early@example.cz'])
    assert.equal(await sender.runOnce(), 1)
    assert.ok(delivered('early@example.cz'), 'the higher row went out, the cursor is past the lower one')
    // The lower row's transaction commits now, while an order comes in before every round.
    await setStatus('late@example.cz', 0)
    const deadline = Date.now() + 5000
    let rounds = 0
    while (!delivered('late@example.cz') && rounds < 300 && Date.now() < deadline) {
      await sendOrderMail(t, shop.key, [`next${rounds}@example.cz`])
      assert.ok((await sender.runOnce()) >= 1, 'every round finds mail to send')
      rounds++
    }
    assert.ok(delivered('late@example.cz'), `the row behind the cursor went out (${rounds} busy rounds)`)
    assert.ok(delivered(`next${rounds - 1}@example.cz`), 'the traffic went on being sent')
  })
})
