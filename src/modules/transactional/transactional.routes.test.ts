import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import path from 'node:path'
import { eq } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { messageBatches } from '../delivery/bodies.table.js'
import { waitForOutboxMail } from '../../../test/helpers/outbox.js'
import { MAX_MERGE_DATA_BYTES, MAX_MESSAGE_BYTES } from './transactional.validate.js'
import {
  addDomain,
  addSuppressed,
  baseMessage,
  countJobs,
  messagesOfBatch,
} from './transactional.test-helpers.js'

const SEND = '/transactional/send-message'
const TEMPLATE = '/transactional/send-template'
/** Nothing to send, so a request that passes validation queues no mail (for the size cases). */
const NOBODY = [{ email: 'not-an-address' }]

describe('transactional intake: rules, limits and errors', async () => {
  // A body limit far below the 4 MB message limit: the routes must raise their own.
  const t = await startTestApp({ config: { bodyLimitBytes: 1024 * 1024 } })
  const paid = await t.createAccount('paid')
  const free = await t.createAccount('free')
  const other = await t.createAccount('paid')
  await addDomain(t, paid.id, 'shop.example')
  await addDomain(t, paid.id, 'unverified.example', { valid: false })
  await addDomain(t, paid.id, 'sending.example', { type: 'sending' })
  await addDomain(t, other.id, 'theirs.example')
  await addDomain(t, free.id, 'free.example')
  await addSuppressed(t, paid.id, 'gone@example.cz')

  const send = (message: Record<string, unknown>, key = paid.key, path = SEND) =>
    t.req('POST', path, { key, body: { message } })
  const msg = (overrides: Record<string, unknown> = {}) => baseMessage('info@shop.example', overrides)
  const errorsOf = async (message: Record<string, unknown>, path = SEND) => {
    const res = await send(message, paid.key, path)
    assert.equal(res.status, 422, JSON.stringify(res.body))
    return res.body.errors as Record<string, string[]>
  }

  it('counts unique, invalid and suppressed recipients and writes one row per accepted one', async () => {
    const res = await send(
      msg({
        to: [
          { email: 'Jana@Example.cz', name: 'Jana' },
          { email: 'jana@example.cz', name: 'Other name' },
          { email: 'petr@example.cz' },
          { email: 'not-an-address' },
          { email: 'GONE@example.cz' },
        ],
        merge_vars: [{ rcpt: 'JANA@example.cz', vars: [{ name: 'First', content: 'Jana' }] }],
      }),
    )
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    const { results } = res.body
    assert.equal(results.total_accepted_recipients, 2)
    assert.equal(results.total_rejected_recipients, 2)
    assert.equal(typeof results.id, 'number')
    const rows = await messagesOfBatch(t, results.id)
    assert.deepEqual(
      rows.map((r) => [r.email, r.recipientName, r.kind, r.accountId, r.vars]),
      [
        ['jana@example.cz', 'Jana', 'transactional', paid.id, { first: 'Jana' }],
        ['petr@example.cz', '', 'transactional', paid.id, null],
      ],
    )
    assert.equal(await countJobs(t, results.id), 0, 'no job per call: the sender claims the ledger rows')
  })

  it('takes mailboxes ("Name" <address>) in email, cc and bcc, as mail libraries write them', async () => {
    const res = await send(
      msg({
        to: [
          { email: '"Nováková, Jana" <Jana.Mailbox@example.cz>', cc: 'Petr <petr.cc@example.cz>' },
          { email: 'Eva <eva.mailbox@example.cz>', name: 'Eva Given', bcc: '"B" <b.bcc@example.cz>' },
        ],
      }),
    )
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.results.total_accepted_recipients, 2)
    assert.equal(res.body.results.total_rejected_recipients, 0)
    const rows = await messagesOfBatch(t, res.body.results.id)
    assert.deepEqual(
      rows.map((r) => [r.email, r.recipientName]),
      [
        ['jana.mailbox@example.cz', 'Nováková, Jana'],
        ['eva.mailbox@example.cz', 'Eva Given'],
      ],
    )
    const [batch] = await t.ctx.db
      .select({ copies: messageBatches.copies })
      .from(messageBatches)
      .where(eq(messageBatches.id, res.body.results.id))
    assert.deepEqual(batch?.copies, {
      // The cc's name goes into the Cc header; a bcc's would be shown nowhere.
      'jana.mailbox@example.cz': {
        cc: ['petr.cc@example.cz'],
        bcc: [],
        names: { 'petr.cc@example.cz': 'Petr' },
      },
      'eva.mailbox@example.cz': { cc: [], bcc: ['b.bcc@example.cz'] },
    })
    const bad = await errorsOf(msg({ to: [{ email: 'a@example.cz', cc: 'Petr <not an address>' }] }))
    assert.deepEqual(bad, { 'message.to.0.cc': ['The selected cc is invalid.'] })
  })

  it('accepts a verified sending domain too, and queues nothing when nobody is accepted', async () => {
    const viaSending = await send(baseMessage('a@sending.example'))
    assert.equal(viaSending.status, 200)
    const none = await send(msg({ to: [{ email: 'gone@example.cz' }, { email: 'x@' }] }))
    assert.equal(none.status, 200)
    assert.deepEqual(none.body.results, {
      total_rejected_recipients: 2,
      total_accepted_recipients: 0,
      id: none.body.results.id,
    })
    assert.equal(await countJobs(t, none.body.results.id), 0)
    assert.equal((await messagesOfBatch(t, none.body.results.id)).length, 0)
  })

  it('refuses the free plan with 403 {errors: string}', async () => {
    for (const path of [SEND, TEMPLATE]) {
      const res = await send({ ...baseMessage('a@free.example'), template_id: 1 }, free.key, path)
      assert.equal(res.status, 403)
      assert.equal(typeof res.body.errors, 'string')
    }
  })

  it('answers the free plan 403 before looking at the body', async () => {
    for (const path of [SEND, TEMPLATE]) {
      for (const body of [{}, { message: {} }]) {
        const res = await t.req('POST', path, { key: free.key, body })
        assert.equal(res.status, 403, JSON.stringify(res.body))
        assert.equal(typeof res.body.errors, 'string')
      }
    }
    assert.equal((await t.req('POST', SEND, { key: null, body: {} })).status, 401)
  })

  it('without SMTP_URL (outbox mode) takes a sender domain that is not verified, and writes it unsigned', async () => {
    const outbox = path.join(t.dataDir, 'outbox')
    for (const [i, from] of ['a@unverified.example', 'a@nowhere.example', 'a@theirs.example'].entries()) {
      const to = `outbox${i}@example.cz`
      const res = await send(baseMessage(from, { to: [{ email: to }], subject: `Unverified ${i}` }))
      assert.equal(res.status, 200, from)
      assert.equal(res.body.results.total_accepted_recipients, 1)
      const mail = await waitForOutboxMail(outbox, to)
      assert.equal(mail.parsed.from?.value[0]?.address, from)
      assert.equal(mail.parsed.subject, `Unverified ${i}`)
      assert.doesNotMatch(mail.raw, /^DKIM-Signature:/im, from)
    }
    assert.deepEqual(Object.keys(await errorsOf(baseMessage('not-an-address'))), ['message.from_email'])
  })

  it('names each missing or malformed field by its path', async () => {
    const missing = await errorsOf({ to: [{ name: 'x' }] })
    assert.deepEqual(Object.keys(missing).sort(), [
      'message.from_email',
      'message.from_name',
      'message.subject',
      'message.to.0.email',
    ])
    assert.deepEqual(missing['message.subject'], ['The subject field is required.'])
    assert.deepEqual(Object.keys(await errorsOf(msg({ to: [] }))), ['message.to'])
    assert.deepEqual(Object.keys(await errorsOf(msg({ to: undefined }))), ['message.to'])
    assert.deepEqual(Object.keys(await errorsOf(msg({ from_email: 'nope' }))), ['message.from_email'])
    assert.deepEqual(Object.keys(await errorsOf(msg({ reply_to: 'nope' }))), ['message.reply_to'])
    const cc = await errorsOf(msg({ to: [{ email: 'a@example.cz' }, { email: 'a@example.cz', bcc: 'x' }] }))
    assert.deepEqual(Object.keys(cc), ['message.to.1.bcc'])
    const none = await t.req('POST', SEND, { key: paid.key, body: {} })
    assert.deepEqual(Object.keys(none.body.errors), ['message'])
    assert.equal((await t.req('POST', SEND, { key: null, body: { message: msg() } })).status, 401)
  })

  it('needs text or html', async () => {
    const errors = await errorsOf(msg({ html: undefined, text: '' }))
    assert.deepEqual(Object.keys(errors), ['message.html'])
    assert.equal((await send(msg({ html: undefined, text: 'Plain only' }))).status, 200)
    // Clients send absent optional fields as null.
    const nulls = {
      global_merge_vars: null,
      merge_vars: null,
      attachments: null,
      options: null,
      reply_to: null,
    }
    const withNulls = await send(msg({ ...nulls, html: null, text: 'x' }))
    assert.equal(withNulls.status, 200, JSON.stringify(withNulls.body))
    // A PHP client's empty collections: json_encode writes each as [], the options map included.
    const phpEmpty = await send(
      msg({ global_merge_vars: [], merge_vars: [], attachments: [], options: [], text: 'x' }),
    )
    assert.equal(phpEmpty.status, 200, JSON.stringify(phpEmpty.body))
    assert.deepEqual(Object.keys(await errorsOf(msg({ options: [true] }))), ['message.options'])
  })

  it('refuses the reserved merge tag names, in any case, at their path', async () => {
    const reserved = ['address.name', 'EMAIL', 'email_id', 'Address.Email', 'env_from']
    const globalErrors = await errorsOf(
      msg({
        global_merge_vars: [{ name: 'ok', content: 1 }, ...reserved.map((name) => ({ name, content: 'x' }))],
      }),
    )
    assert.deepEqual(
      Object.keys(globalErrors),
      reserved.map((_, i) => `message.global_merge_vars.${i + 1}.name`),
    )
    const perRecipient = await errorsOf(
      msg({
        merge_vars: [{ rcpt: 'someone@example.cz', vars: [{ name: 'a', content: '' }, { name: 'email' }] }],
      }),
    )
    assert.deepEqual(Object.keys(perRecipient), ['message.merge_vars.0.vars.1.name'])
  })

  it('allows 100,000 bytes of merge data in total, not one more', async () => {
    const vars = (n: number) => [{ name: 'big', content: 'x'.repeat(n) }]
    const fits = MAX_MERGE_DATA_BYTES
    const ok = await send(msg({ to: NOBODY, global_merge_vars: vars(fits) }))
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    const over = await errorsOf(msg({ global_merge_vars: vars(fits + 1) }))
    assert.deepEqual(Object.keys(over), ['message.global_merge_vars'])
    // Global and per-recipient data count together.
    const halves = (extra: number) =>
      msg({
        to: NOBODY,
        global_merge_vars: vars(fits / 2),
        merge_vars: [{ rcpt: 'someone@example.cz', vars: vars(fits / 2 + extra) }],
      })
    assert.equal((await send(halves(0))).status, 200)
    const split = await errorsOf(halves(1))
    assert.deepEqual(Object.keys(split), ['message.merge_vars'])
    // The bytes merged count, not their JSON escapes: 60,000 newlines are 120,000 bytes of JSON.
    const newlines = await send(
      msg({ to: NOBODY, global_merge_vars: [{ name: 'nl', content: '\n'.repeat(60_000) }] }),
    )
    assert.equal(newlines.status, 200, JSON.stringify(newlines.body))
    // Multi-byte characters count by their UTF-8 bytes: 50,001 × 2 bytes is over.
    const wide = await errorsOf(msg({ global_merge_vars: [{ name: 'w', content: 'ř'.repeat(50_001) }] }))
    assert.deepEqual(Object.keys(wide), ['message.global_merge_vars'])
  })

  it('keeps the whole message under 4 MB, attachments counted decoded', async () => {
    const attachment = (bytes: number) => ({
      type: 'application/octet-stream',
      name: 'blob.bin',
      content: Buffer.alloc(bytes, 7).toString('base64'),
    })
    const html = '<p>Hello</p>'
    const room = MAX_MESSAGE_BYTES - 'Hello'.length - 'Shop'.length - html.length
    const ok = await send(msg({ to: NOBODY, html, attachments: [attachment(room - 1)] }))
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    const half = Math.ceil(room / 2)
    const over = await errorsOf(msg({ html, attachments: [attachment(half), attachment(half)] }))
    assert.deepEqual(Object.keys(over), ['message.attachments'])
    const bigHtml = await errorsOf(msg({ html: 'x'.repeat(MAX_MESSAGE_BYTES) }))
    assert.deepEqual(Object.keys(bigHtml), ['message.html'])
    // The AMP version counts too, and is named when it is what makes the message large.
    const halfHtml = 'x'.repeat(Math.ceil(MAX_MESSAGE_BYTES / 2))
    const bigAmp = await errorsOf(msg({ html: halfHtml, amp_html: `${halfHtml}xx` }))
    assert.deepEqual(Object.keys(bigAmp), ['message.amp_html'])
  })

  it('needs attachments with a type, a name and base64 content', async () => {
    const good = { type: 'text/plain', name: 'a.txt', content: 'aGVs\r\nbG8=' }
    assert.equal((await send(msg({ to: NOBODY, attachments: [good] }))).status, 200)
    const content = await errorsOf(
      msg({ attachments: [good, { ...good, content: 'not base64!' }, { ...good, content: 'aGVsbG8' }] }),
    )
    assert.deepEqual(Object.keys(content), ['message.attachments.1.content', 'message.attachments.2.content'])
    const fields = await errorsOf(
      msg({
        attachments: [good, { type: 'text/plain', content: 'aGk=' }, { name: 'b.txt', content: 'aGk=' }],
      }),
    )
    assert.deepEqual(Object.keys(fields).sort(), ['message.attachments.1.name', 'message.attachments.2.type'])
    // The type becomes a Content-Type header: a line break in it is refused, parameters are fine.
    const typed = await errorsOf(
      msg({
        attachments: [
          { ...good, type: 'text/plain; charset=utf-8' },
          { ...good, type: 'text/plain\r\nX-Injected: 1' },
        ],
      }),
    )
    assert.deepEqual(Object.keys(typed), ['message.attachments.1.type'])
  })

  it("sends a template of the account; another account's or a missing one is 404", async () => {
    const tpl = await t.req('POST', '/templates', {
      key: paid.key,
      body: { name: 'T', html: '<p>*|x|*</p>', subject: 'From template' },
    })
    const ok = await send(
      msg({ template_id: tpl.body.id, subject: undefined, html: undefined }),
      paid.key,
      TEMPLATE,
    )
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    const [row] = await messagesOfBatch(t, ok.body.results.id)
    assert.equal(row?.subject, 'From template')
    const theirs = await t.req('POST', '/templates', { key: other.key, body: { name: 'T', html: 'x' } })
    const hidden = await send(msg({ template_id: theirs.body.id }), paid.key, TEMPLATE)
    const missing = await send(msg({ template_id: 99999 }), paid.key, TEMPLATE)
    assert.equal(hidden.status, 404)
    assert.deepEqual(hidden.body, missing.body)
    assert.deepEqual(hidden.body, { message: 'Template not found' })
    assert.deepEqual(Object.keys(await errorsOf(msg(), TEMPLATE)), ['message.template_id'])
    const noSubject = await t.req('POST', '/templates', { key: paid.key, body: { name: 'N', html: 'x' } })
    const needsSubject = await errorsOf(msg({ template_id: noSubject.body.id, subject: '' }), TEMPLATE)
    assert.deepEqual(Object.keys(needsSubject), ['message.subject'])
  })
})
