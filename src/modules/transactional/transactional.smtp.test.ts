import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { and, eq } from 'drizzle-orm'
import type { AddressObject } from 'mailparser'
import { startTestApp } from '../../../test/helpers/app.js'
import { dkimResults } from '../../../test/helpers/dkim.js'
import { startSmtpSink, type SinkMessage, type SmtpSink } from '../../../test/helpers/smtp-sink.js'
import { events } from '../events/index.js'
import { trackingLinks } from '../tracking/index.js'
import { contacts } from '../subscribers/index.js'
import { sql } from 'drizzle-orm'
import { startCampaignSender as startSender } from '../../../test/helpers/sender.js'
import {
  addDomain,
  addSuppressed,
  baseMessage,
  batchState,
  messagesOfBatch,
  type TestDomain,
} from './transactional.test-helpers.js'

async function mailTo(sink: SmtpSink, address: string, timeoutMs = 15_000): Promise<SinkMessage> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = sink.messages.find((m) => m.envelopeTo[0] === address)
    if (found) return found
    if (Date.now() > deadline) throw new Error(`no mail to ${address}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const addresses = (a: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(a) ? a : a ? [a] : []).flatMap((x) => x.value.map((v) => v.address))

const dkimResult = (raw: string, d: TestDomain) => dkimResults(raw, d)

// At file level, so it closes after the app (the app's pooled connections would hold it open otherwise).
const sink = await startSmtpSink({
  rcptCode: (a) => (a.startsWith('refused') ? 550 : a.startsWith('later') ? 451 : undefined),
})

describe('transactional mail over SMTP', async () => {
  const t = await startTestApp({ config: { smtpUrl: sink.url } })
  const paid = await t.createAccount('paid')
  const domain = await addDomain(t, paid.id, 'shop.example')
  await addSuppressed(t, paid.id, 'gone@example.cz')
  const send = (message: Record<string, unknown>, path = '/transactional/send-message') =>
    t.req('POST', path, { key: paid.key, body: { message } })
  const pdf = randomBytes(3000)

  it('sends one personalised, tracked, DKIM-signed message per recipient, with copies and attachment', async () => {
    const res = await send({
      subject: 'Order for *|first|*',
      from_name: 'Shop',
      from_email: 'orders@shop.example',
      reply_to: 'help@shop.example',
      // Line ends as JSON clients write them (\n, here and in the text), which SMTP sends as CRLF: the DKIM
      // signature must be made over the message as it travels (with Cc and attachments it once was not).
      html:
        '<html><head><style>p { color: red }</style></head>\n<body><p>Hi *|FIRST|* from *|shop|*, ' +
        'code {*|code|*}, to *|email|*.</p>\n<a href="https://shop.example/order?id=1&amp;x=2">Order</a></body></html>',
      text: 'Hi *|first|* from *|shop|*,\ncode {*|code|*}',
      to: [
        { email: 'jana@example.cz', name: 'Jana Nováková', cc: '"Šéf, Jan" <boss@example.cz>' },
        { email: 'Jana@example.cz', cc: 'office@example.cz', bcc: 'archive@example.cz' },
        { email: 'petr@example.cz', name: 'Petr' },
        { email: 'not-an-address' },
        { email: 'gone@example.cz' },
      ],
      global_merge_vars: [
        { name: 'shop', content: 'Obchod <b>' },
        { name: 'first', content: 'friend' },
      ],
      merge_vars: [
        {
          rcpt: 'jana@example.cz',
          vars: [
            { name: 'First', content: 'Jana & co' },
            { name: 'code', content: '<i>A1</i>' },
          ],
        },
      ],
      attachments: [{ type: 'application/pdf', name: 'invoice.pdf', content: pdf.toString('base64') }],
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const { results } = res.body
    assert.equal(results.total_accepted_recipients, 2)
    assert.equal(results.total_rejected_recipients, 2)

    const jana = await mailTo(sink, 'jana@example.cz')
    assert.deepEqual(jana.envelopeTo, [
      'jana@example.cz',
      'boss@example.cz',
      'office@example.cz',
      'archive@example.cz',
    ])
    const p = jana.parsed
    assert.deepEqual(addresses(p.to), ['jana@example.cz'])
    assert.deepEqual(addresses(p.cc), ['boss@example.cz', 'office@example.cz'])
    // A cc given with a name keeps it in the header (encoded: it has a comma and accents).
    assert.deepEqual(
      (Array.isArray(p.cc) ? p.cc : [p.cc]).flatMap((c) => c?.value.map((v) => v.name) ?? []),
      ['Šéf, Jan', ''],
    )
    assert.equal(p.bcc, undefined)
    assert.doesNotMatch(jana.raw.split('\r\n\r\n')[0]!, /^bcc:/im)
    assert.equal(p.from?.value[0]?.address, 'orders@shop.example')
    assert.equal(p.replyTo?.value[0]?.address, 'help@shop.example')
    assert.equal(p.subject, 'Order for Jana & co')
    const html = String(p.html)
    assert.ok(
      html.includes('Hi Jana &amp; co from Obchod &lt;b&gt;, code <i>A1</i>, to jana@example.cz.'),
      html,
    )
    assert.match(html, /<p style="color: ?red;?">/)
    assert.match(html, /href="http:\/\/127\.0\.0\.1:3000\/t\/c\/[^"]+"/)
    assert.ok(!html.includes('https://shop.example/order'))
    assert.match(html, /<img src="http:\/\/127\.0\.0\.1:3000\/t\/o\/[^"]+\.gif"/)
    assert.equal(p.text?.trim(), 'Hi Jana & co from Obchod <b>,\ncode <i>A1</i>')
    assert.match(jana.envelopeFrom, /^bounces\+[A-Za-z0-9_.-]+@bounces\.shop\.example$/)
    assert.equal(p.attachments.length, 1)
    assert.equal(p.attachments[0]?.filename, 'invoice.pdf')
    assert.equal(p.attachments[0]?.contentType, 'application/pdf')
    assert.ok(p.attachments[0]?.content.equals(pdf))

    const dkim = await dkimResult(jana.raw, domain)
    assert.equal(dkim.length, 1)
    assert.equal(dkim[0]?.signingDomain, 'shop.example')
    assert.equal(dkim[0]?.status.result, 'pass', dkim[0]?.info)
    const tampered = await dkimResult(jana.raw.replace('Order for Jana', 'Order for Eve'), domain)
    assert.notEqual(tampered[0]?.status.result, 'pass')

    const petr = await mailTo(sink, 'petr@example.cz')
    assert.deepEqual(petr.envelopeTo, ['petr@example.cz'])
    assert.equal(petr.parsed.cc, undefined)
    assert.equal(petr.parsed.subject, 'Order for friend')
    assert.ok(
      String(petr.parsed.html).includes('Hi friend from Obchod &lt;b&gt;, code , to petr@example.cz.'),
    )
    assert.equal((await dkimResult(petr.raw, domain))[0]?.status.result, 'pass')
    assert.equal(
      sink.messages.some((m) => m.envelopeTo.includes('gone@example.cz')),
      false,
    )

    assert.equal(await batchState(t, results.id, ['completed']), 'completed')
    const rows = await messagesOfBatch(t, results.id)
    assert.deepEqual(
      rows.map((r) => [r.email, r.status, r.subject]),
      [
        ['jana@example.cz', 1, 'Order for Jana & co'],
        ['petr@example.cz', 1, 'Order for friend'],
      ],
    )
    // Neither links nor HTML are stored per message: the click page and the web version render them again.
    const links = trackingLinks(t.ctx)
    const path = (url: string) => url.slice(t.ctx.config.publicUrl.length)
    const click = await t.req('GET', path(links.click(rows[0]!.id, 0)), { key: null })
    assert.equal(click.status, 302)
    assert.equal(click.headers.location, 'https://shop.example/order?id=1&x=2')
    const web = await t.req('GET', path(links.webVersion(rows[0]!.id)), { key: null })
    assert.equal(web.status, 200)
    assert.match(web.text, /\/t\/c\//)
    assert.match(web.text, /Hi Jana &amp; co/)
    // The web version has the tracked links but no open pixel: viewing it is no open.
    assert.doesNotMatch(web.text, /\/t\/o\//)
    const sent = await t.ctx.db.select().from(events).where(eq(events.messageId, rows[0]!.id))
    assert.deepEqual(
      sent.map((e) => [e.event, e.campaignId, e.email]),
      [
        ['send', 0, 'jana@example.cz'],
        ['click', 0, 'jana@example.cz'],
      ],
    )
  })

  it('with a relay, needs from_email on a verified domain of the account', async () => {
    await addDomain(t, paid.id, 'unverified.example', { valid: false })
    const other = await t.createAccount('paid')
    await addDomain(t, other.id, 'theirs.example')
    for (const from of [
      'a@unverified.example',
      'a@theirs.example',
      'a@nowhere.example',
      'a@sub.shop.example',
    ]) {
      const res = await send(baseMessage(from, { to: [{ email: 'unverified-sender@example.cz' }] }))
      assert.equal(res.status, 422, from)
      assert.deepEqual(Object.keys(res.body.errors), ['message.from_email'], from)
    }
    assert.equal(sink.messages.filter((m) => m.envelopeTo.includes('unverified-sender@example.cz')).length, 0)
  })

  it('honours the tracking options and sends templates', async () => {
    const tpl = await t.req('POST', '/templates', {
      key: paid.key,
      body: {
        name: 'T',
        subject: 'Template for *|name|*',
        html: '<p>*|name|*</p><a href="https://x.example/">x</a>',
      },
    })
    const res = await send(
      {
        template_id: tpl.body.id,
        from_name: 'Shop',
        from_email: 'orders@shop.example',
        to: [{ email: 'tpl@example.cz' }],
        global_merge_vars: [{ name: 'name', content: 'Eva' }],
        // '0' as PHP clients send a setting's string.
        options: { click_tracking: false, open_tracking: '0' },
      },
      '/transactional/send-template',
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const mail = await mailTo(sink, 'tpl@example.cz')
    assert.equal(mail.parsed.subject, 'Template for Eva')
    const html = String(mail.parsed.html)
    assert.ok(html.includes('<p>Eva</p><a href="https://x.example/">x</a>'), html)
    assert.ok(!html.includes('/t/o/'))
    // Without a `name` merge var, *|name|* is the recipient's name as the call gives it.
    const named = await send(
      {
        template_id: tpl.body.id,
        from_name: 'Shop',
        from_email: 'orders@shop.example',
        to: [{ email: 'named.tpl@example.cz', name: 'Jana Zelená' }],
      },
      '/transactional/send-template',
    )
    assert.equal(named.status, 200, JSON.stringify(named.body))
    assert.equal((await mailTo(sink, 'named.tpl@example.cz')).parsed.subject, 'Template for Jana Zelená')
  })

  it('sends amp_html as a text/x-amp-html part beside the text and HTML, merge tags filled, signed', async () => {
    const amp =
      '<!doctype html><html ⚡4email><head><meta charset="utf-8"></head>' +
      '<body><p>Hi *|name|*</p><a href="https://shop.example/amp">AMP</a></body></html>'
    const res = await send({
      subject: 'AMP',
      from_name: 'Shop',
      from_email: 'orders@shop.example',
      html: '<p>Hi *|name|*</p><a href="https://shop.example/html">HTML</a>',
      amp_html: amp,
      to: [{ email: 'amp@example.cz', name: 'Eva' }],
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const mail = await mailTo(sink, 'amp@example.cz')
    const [head, ...rest] = mail.raw.split('\r\n\r\n')
    assert.match(head!, /^content-type: multipart\/alternative/im)
    const body = rest.join('\r\n\r\n')
    // Plain text, then AMP, then HTML: the order AMP for Email asks for (the last part a client can show wins).
    const types = [...body.matchAll(/^content-type: (text\/[a-z-]+)/gim)].map((m) => m[1]!.toLowerCase())
    assert.deepEqual(types, ['text/plain', 'text/x-amp-html', 'text/html'])
    const ampPart = body.slice(body.search(/^content-type: text\/x-amp-html/im))
    const decoded = ampPart
      .split('\r\n\r\n')[1]!
      .replace(/=\r\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    assert.ok(decoded.includes('<p>Hi Eva</p><a href="https://shop.example/amp">AMP</a>'), decoded)
    // The HTML part is tracked as ever; the AMP part is sent as written.
    assert.ok(!String(mail.parsed.html).includes('https://shop.example/html'))
    assert.equal((await dkimResult(mail.raw, domain))[0]?.status.result, 'pass')
  })

  it('records a recipient the relay refuses with 550 as a hard bounce and suppresses it', async () => {
    const res = await send({
      subject: 'S',
      from_name: 'Shop',
      from_email: 'orders@shop.example',
      text: 'hello',
      to: [{ email: 'refused@example.cz' }],
    })
    const id: number = res.body.results.id
    assert.equal(await batchState(t, id, ['completed']), 'completed')
    const [row] = await messagesOfBatch(t, id)
    assert.equal(row?.status, 2)
    assert.match(row?.error ?? '', /550/)
    const logged = await t.ctx.db.select().from(events).where(eq(events.messageId, row!.id))
    assert.deepEqual(
      logged.map((e) => e.event),
      ['hard_bounce'],
    )
    const [contact] = await t.ctx.db
      .select()
      .from(contacts)
      .where(and(eq(contacts.accountId, paid.id), eq(contacts.email, 'refused@example.cz')))
    assert.equal(contact?.suppressed, 'hard_bounce')
    const again = await send({
      subject: 'S',
      from_name: 'Shop',
      from_email: 'orders@shop.example',
      text: 'hello',
      to: [{ email: 'refused@example.cz' }],
    })
    assert.deepEqual(
      [again.body.results.total_accepted_recipients, again.body.results.total_rejected_recipients],
      [0, 1],
    )
  })

  it('retries what the relay defers and makes it a soft bounce on the last try', async () => {
    const res = await send({
      subject: 'S',
      from_name: 'Shop',
      from_email: 'orders@shop.example',
      text: 'hello',
      to: [{ email: 'later@example.cz' }],
    })
    const id: number = res.body.results.id
    // The first try was deferred: the row waits, claimed, for its retry (minutes away): play it now.
    assert.equal(await batchState(t, id, ['retry']), 'retry')
    const [waiting] = await messagesOfBatch(t, id)
    assert.equal(waiting?.status, 4)
    assert.equal(sink.messages.filter((m) => m.envelopeTo[0] === 'later@example.cz').length, 0)
    const due = () =>
      t.ctx.db.execute(
        sql`UPDATE messages SET claimed_until = claimed_until - interval '1 hour' WHERE id = ${waiting!.id}`,
      )
    await due()
    const sender = startSender(t.ctx, { loop: false })
    try {
      await sender.runOnce()
      assert.equal(await batchState(t, id, ['completed']), 'completed')
      const [row] = await messagesOfBatch(t, id)
      assert.equal(row?.status, 2)
      const logged = await t.ctx.db.select().from(events).where(eq(events.messageId, row!.id))
      assert.deepEqual(
        logged.map((e) => e.event),
        ['soft_bounce'],
      )
      // Nothing is left queued or claimed, so another round sends nothing.
      await due()
      assert.equal(await sender.runOnce(), 0)
      assert.equal((await messagesOfBatch(t, id))[0]?.status, 2)
    } finally {
      await sender.stop()
    }
  })
})
