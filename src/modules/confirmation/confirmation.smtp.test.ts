import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { startSmtpSink, type SinkMessage, type SmtpSink } from '../../../test/helpers/smtp-sink.js'
import { dkimResults } from '../../../test/helpers/dkim.js'
import { signToken } from '../../core/ids.js'
import { addDomain } from '../transactional/transactional.test-helpers.js'
import { contacts, memberships } from '../subscribers/index.js'
import { queueConfirmationMail } from './index.js'
import {
  addMember,
  confirmPath,
  countConfirmationJobs,
  jobDone,
  membershipOf,
  statusByEmail,
} from './confirmation.test-helpers.js'

async function mailTo(sink: SmtpSink, address: string, timeoutMs = 10_000): Promise<SinkMessage> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = sink.messages.find((m) => m.envelopeTo.includes(address))
    if (found) return found
    if (Date.now() > deadline) throw new Error(`no mail to ${address}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

// The sink lives at file level so that it closes after the app: closed first, it would wait for the
// app's pooled SMTP connections through smtp-server's 30 s close timeout.
const sink = await startSmtpSink({ rcptCode: (a) => (a.startsWith('refused') ? 550 : undefined) })

describe('double opt-in confirmation over SMTP', async () => {
  const t = await startTestApp({ config: { smtpUrl: sink.url } })

  const created = await t.req('POST', '/lists', {
    body: {
      name: 'Newsletter',
      double_optin: true,
      from_email: 'news@shop.cz',
      from_name: 'Shop News',
      reply_to: 'help@shop.cz',
      conf_subject: 'Confirm your subscription',
      conf_message: '<html><body><p>Hello, <a href="*|confirm|*">confirm here</a>.</p></body></html>',
      sub_confirmed_page: 'https://shop.cz/thanks?email=*|EMAIL|*',
    },
  })
  assert.equal(created.status, 200)
  const listId: number = created.body.id

  it('mails the link to an unconfirmed subscriber; the link confirms once and stays fine', async () => {
    const { contactId } = await addMember(t, listId, 'jana@example.cz')
    const mail = await mailTo(sink, 'jana@example.cz')
    const p = mail.parsed
    assert.deepEqual(p.from?.value, [{ name: 'Shop News', address: 'news@shop.cz' }])
    assert.deepEqual(p.to && !Array.isArray(p.to) ? p.to.value : null, [
      { name: 'Jana Nováková', address: 'jana@example.cz' },
    ])
    assert.equal(p.replyTo?.value[0]?.address, 'help@shop.cz')
    assert.equal(p.subject, 'Confirm your subscription')
    const expected = `/confirm/${signToken(t.ctx.linkSecret, 'confirm', `${listId}.${contactId}`)}`
    assert.equal(confirmPath(String(p.html)), expected)
    assert.ok(String(p.html).includes(`href="http://127.0.0.1:3000${expected}"`))
    assert.equal(confirmPath(p.text ?? ''), expected)

    const before = await membershipOf(t, listId, contactId)
    assert.equal(before?.status, 6)
    const res = await t.req('GET', expected, { key: null })
    assert.equal(res.status, 302)
    assert.equal(res.headers.location, 'https://shop.cz/thanks?email=jana%40example.cz')
    const after = await membershipOf(t, listId, contactId)
    assert.equal(after?.status, 1)
    assert.ok(after!.subscribedAt.getTime() >= before!.subscribedAt.getTime())
    assert.ok(after!.updatedAt.getTime() >= before!.updatedAt.getTime())

    const again = await t.req('GET', expected, { key: null })
    assert.equal(again.status, 302)
    assert.equal(again.headers.location, 'https://shop.cz/thanks?email=jana%40example.cz')
    assert.deepEqual(await membershipOf(t, listId, contactId), after)
  })

  it('answers a forged, tampered or malformed token with a bare 404', async () => {
    const { contactId } = await addMember(t, listId, 'tamper@example.cz')
    const good = confirmPath(String((await mailTo(sink, 'tamper@example.cz')).parsed.html))
    // Flip whole characters of the MAC and of the payload. (Not the MAC's last one: it carries 2 bits plus
    // 4 padding bits that base64url decoding ignores, so some changes there decode to the very same MAC.)
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1)
    const dot = good.indexOf('.')
    const forged = [
      flip(good, dot + 5),
      flip(good, '/confirm/'.length),
      `/confirm/${signToken('another-secret', 'confirm', `${listId}.${contactId}`)}`,
      `/confirm/${signToken(t.ctx.linkSecret, 'unsubscribe', `${listId}.${contactId}`)}`,
      `/confirm/${signToken(t.ctx.linkSecret, 'confirm', `${listId}.x`)}`,
      `/confirm/${signToken(t.ctx.linkSecret, 'confirm', `${listId}.99999999999`)}`,
      '/confirm/garbage',
      '/confirm/.',
      `/confirm/${'a'.repeat(900)}.${'b'.repeat(90)}`,
    ]
    for (const path of forged) {
      const res = await t.req('GET', path, { key: null })
      assert.equal(res.status, 404, path)
      assert.deepEqual(res.body, { message: 'Not Found' })
      assert.equal(res.headers['content-type'], 'application/json')
    }
    assert.equal((await membershipOf(t, listId, contactId))?.status, 6)
  })

  it('sends nothing for a membership that is no longer unconfirmed, and its link changes nothing', async () => {
    const { contactId } = await addMember(t, listId, 'gone@example.cz', 2)
    assert.equal(await jobDone(t, contactId), 'completed')
    assert.equal(
      sink.messages.some((m) => m.envelopeTo.includes('gone@example.cz')),
      false,
    )
    const path = `/confirm/${signToken(t.ctx.linkSecret, 'confirm', `${listId}.${contactId}`)}`
    const res = await t.req('GET', path, { key: null })
    assert.equal(res.status, 302)
    assert.equal((await membershipOf(t, listId, contactId))?.status, 2)
  })

  it('shows its own page for a list without sub_confirmed_page, and for a list that is gone', async () => {
    const bare = await t.req('POST', '/lists', { body: { name: 'Plain', double_optin: true } })
    const { contactId } = await addMember(t, bare.body.id, 'plain@example.cz')
    const mail = (await mailTo(sink, 'plain@example.cz')).parsed
    assert.equal(mail.from?.value[0]?.address, t.ctx.config.mailFrom)
    assert.equal(mail.subject, 'Please confirm your subscription to Plain')
    assert.equal(mail.replyTo, undefined)
    const path = confirmPath(String(mail.html))
    assert.equal(confirmPath(mail.text ?? ''), path)
    const res = await t.req('GET', path, { key: null })
    assert.equal(res.status, 200)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.match(res.text, /Your subscription is confirmed/)
    assert.equal((await membershipOf(t, bare.body.id, contactId))?.status, 1)

    await t.req('DELETE', `/lists/${bare.body.id}`)
    const gone = await t.req('GET', path, { key: null })
    assert.equal(gone.status, 200)
    assert.match(gone.text, /Your subscription is confirmed/)
  })

  it('queues nothing when the subscription rolls back', async () => {
    const before = await countConfirmationJobs(t)
    await assert.rejects(
      t.ctx.db.transaction(async (tx) => {
        const [c] = await tx
          .insert(contacts)
          .values({ accountId: t.account.id, email: 'rollback@example.cz' })
          .returning({ id: contacts.id })
        await tx.insert(memberships).values({ accountId: t.account.id, listId, contactId: c!.id, status: 6 })
        await queueConfirmationMail(t.ctx, tx, { accountId: t.account.id, listId, contactId: c!.id })
        throw new Error('rollback')
      }),
      /rollback/,
    )
    assert.equal(await countConfirmationJobs(t), before)
  })

  it("does not mail another account's list", async () => {
    const other = await t.createAccount()
    const { contactId } = await t.ctx.db.transaction(async (tx) => {
      const [c] = await tx
        .insert(contacts)
        .values({ accountId: t.account.id, email: 'cross@example.cz' })
        .returning({ id: contacts.id })
      await tx.insert(memberships).values({ accountId: t.account.id, listId, contactId: c!.id, status: 6 })
      await queueConfirmationMail(t.ctx, tx, { accountId: other.id, listId, contactId: c!.id })
      return { contactId: c!.id }
    })
    assert.equal(await jobDone(t, contactId), 'completed')
    assert.equal(
      sink.messages.some((m) => m.envelopeTo.includes('cross@example.cz')),
      false,
    )
  })

  it('does not retry an address the relay refuses for good', async () => {
    const { contactId } = await addMember(t, listId, 'refused@example.cz')
    assert.equal(await jobDone(t, contactId), 'completed')
  })

  it("signs the mail with DKIM once the list's sender domain is verified", async () => {
    const { contactId: first } = await addMember(t, listId, 'unsigned@example.cz')
    const unsigned = await mailTo(sink, 'unsigned@example.cz')
    assert.equal(await jobDone(t, first), 'completed')
    assert.doesNotMatch(unsigned.raw, /^DKIM-Signature:/im, 'no verified domain yet')
    const domain = await addDomain(t, t.account.id, 'shop.cz', { type: 'sending' })
    await addMember(t, listId, 'signed@example.cz')
    const signed = await mailTo(sink, 'signed@example.cz')
    const results = await dkimResults(signed.raw, domain)
    assert.equal(results[0]?.status.result, 'pass', JSON.stringify(results[0]?.status))
  })

  it('works end to end through POST /lists/{id}/subscribe', async () => {
    const res = await t.req('POST', `/lists/${listId}/subscribe`, {
      body: { subscriber_data: { email: 'form@example.cz', name: 'Petr' } },
    })
    assert.equal(res.status, 200)
    assert.equal(await statusByEmail(t, listId, 'form@example.cz'), 6)
    const mail = (await mailTo(sink, 'form@example.cz')).parsed
    assert.equal(mail.subject, 'Confirm your subscription')
    const confirm = await t.req('GET', confirmPath(String(mail.html)), { key: null })
    assert.equal(confirm.status, 302)
    assert.equal(await statusByEmail(t, listId, 'form@example.cz'), 1)
  })
})
