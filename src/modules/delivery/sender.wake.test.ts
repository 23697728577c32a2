/**
 * Mail queued by a process without a sender (ROLE=api) reaches the workers' senders at once: the API process
 * announces it on MAIL_QUEUED_CHANNEL, and an idle sender listening there looks for it then, not on its next
 * idle poll. Both halves in one process: the first while no sender runs in it, the second with the notification
 * the first saw sent.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startTestApp } from '../../../test/helpers/app.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { sendOrderMail } from '../../../test/helpers/transactional.js'
import { startCampaignSender } from '../../../test/helpers/sender.js'
import { waitFor } from '../../../test/helpers/wait-for.js'
import { sendingDomain } from '../campaigns/campaign-send.test-helpers.js'
import { MAIL_QUEUED_CHANNEL, queueMail } from './index.js'

const sink = await startSmtpSink()
const delivered = () => sink.messages.flatMap((m) => m.envelopeTo)

describe('sender: mail queued by another process', async () => {
  const t = await startTestApp({ worker: false, config: { smtpUrl: sink.url, sendThreads: 0 } })
  const paid = await t.createAccount('paid')
  await sendingDomain(t, paid)

  it('a process without a sender announces the mail it queued', async () => {
    let heard = 0
    const listening = await t.ctx.dbHandle.listen(
      MAIL_QUEUED_CHANNEL,
      () => heard++,
      () => undefined,
    )
    try {
      await sendOrderMail(t, paid.key, ['first@example.cz'])
      await waitFor(() => heard > 0, 5_000, 'the announcement')
    } finally {
      await listening.close()
    }
    assert.equal(heard, 1)
    assert.deepEqual(delivered(), [], 'no sender here')
  })

  it('an idle sender sends announced mail at once, not on its idle poll a minute later', async () => {
    const sender = startCampaignSender(t.ctx, { loop: true, idlePollMs: 60_000 })
    try {
      await sender.listening
      // Its first round sends what the first test queued; then it idles for a minute.
      await waitFor(() => delivered().length === 1, 10_000, 'the first order mail')
      await queueMail(
        t.ctx.db,
        {
          accountId: paid.id,
          fromName: 'Shop',
          fromEmail: 'orders@shop.example',
          replyTo: null,
          subject: 'Queued elsewhere',
          html: null,
          text: 'Thanks',
          trackOpens: false,
          trackClicks: false,
          marketing: false,
        },
        [{ email: 'second@example.cz', name: '', contactId: null, vars: null }],
        { kind: 'transactional' },
        t.ctx.clock.now(),
      )
      // What the API process's wakeSenders sends.
      await t.ctx.dbHandle.notify(MAIL_QUEUED_CHANNEL)
      await waitFor(() => delivered().length === 2, 10_000, 'the announced mail, before the idle poll')
    } finally {
      await sender.stop()
    }
    assert.deepEqual(delivered(), ['first@example.cz', 'second@example.cz'])
  })

  it('a double opt-in subscribe wakes the sender once it has committed: the confirmation goes at once', async () => {
    const list = await t.req('POST', '/lists', {
      key: paid.key,
      body: { name: 'Double', double_optin: true, from_email: 'news@shop.example', from_name: 'Shop' },
    })
    assert.equal(list.status, 200, list.text)
    await sendOrderMail(t, paid.key, ['third@example.cz'])
    const sender = startCampaignSender(t.ctx, { loop: true, idlePollMs: 60_000 })
    try {
      await sender.listening
      // As above: its first round sends the order mail; then it idles for a minute.
      await waitFor(() => delivered().includes('third@example.cz'), 10_000, 'the order mail')
      const res = await t.req('POST', `/lists/${list.body.id}/subscribe`, {
        key: paid.key,
        body: { subscriber_data: { email: 'joining@example.cz' } },
      })
      assert.equal(res.status, 200, res.text)
      await waitFor(
        () => delivered().includes('joining@example.cz'),
        10_000,
        'the confirmation, before the idle poll',
      )
    } finally {
      await sender.stop()
    }
    const [confirmation] = sink.messages.filter((m) => m.envelopeTo.includes('joining@example.cz'))
    assert.match(String(confirmation?.parsed.html ?? confirmation?.parsed.text), /\/confirm\//)
  })
})
