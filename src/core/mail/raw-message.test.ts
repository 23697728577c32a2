import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import nodemailer from 'nodemailer'
import { simpleParser, type ParsedMail } from 'mailparser'
import { dkimResults, testDkimKey } from '../../../test/helpers/dkim.js'
import { toNodemailer } from './compose.js'
import { dkimSignMessage } from './dkim-sign.js'
import type { OutgoingMail } from './mailer.js'
import { buildRawMessage, buildRawPieces, dataSafeText, headerBlock, mimeNodeHeaders } from './raw-message.js'

const { dkim, published } = testDkimKey()
const verify = async (message: string) => (await dkimResults(message, published)).map((r) => r.status.result)

/** The same mail through nodemailer's own pipeline: what campaign mail used to be, and transactional still is. */
async function viaNodemailer(mail: OutgoingMail): Promise<string> {
  const t = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' })
  return ((await t.sendMail(toNodemailer(mail, 'shop.example'))).message as Buffer).toString()
}

/** What a mail client shows of a message. */
function seen(p: ParsedMail) {
  return {
    from: p.from?.value,
    to: Array.isArray(p.to) ? p.to.map((a) => a.value) : p.to?.value,
    replyTo: p.replyTo?.value,
    subject: p.subject,
    messageId: p.messageId,
    text: p.text,
    html: p.html,
    unsubscribe: p.headers.get('list-unsubscribe'),
    unsubscribePost: p.headers.get('list-unsubscribe-post'),
  }
}

const LONG = 'Nabídka týdne pro věrné zákazníky, kteří nakupují pravidelně a rádi, '.repeat(3)
const base: OutgoingMail = {
  from: { name: 'Obchod "U Lípy", s.r.o.', address: 'news@shop.example' },
  to: [{ name: 'Jana Nováková', address: 'jana@example.cz' }],
  replyTo: 'help@shop.example',
  subject: `Žluťoučký kůň: ${LONG}`,
  messageId: '<42.abc@shop.example>',
  headers: {
    'List-Unsubscribe': '<https://t.shop.example/u/NDI.x>, <mailto:unsubscribe+NDI.x@shop.example>',
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  },
  text: `Dobrý den,\n\n${LONG}\n.\nTrailing spaces here   \n= sign and tabs\there\r\nend`,
  html: `<html><body><p style="color:#333">${LONG}</p><p>a = b &amp; 100 %</p>${'<span>x</span>'.repeat(40)}</body></html>`,
  dkim,
}

describe('buildRawMessage', () => {
  it('shows a mail client what nodemailer would: addresses, encoded subject, both parts, headers', async () => {
    const ours = buildRawMessage(base, 'shop.example').raw
    assert.deepEqual(seen(await simpleParser(ours)), seen(await simpleParser(await viaNodemailer(base))))
    const parsed = await simpleParser(ours)
    assert.equal(parsed.subject, base.subject)
    assert.equal(parsed.from?.value[0]?.name, 'Obchod "U Lípy", s.r.o.')
    assert.equal(parsed.text?.replace(/\r\n/g, '\n'), base.text!.replace(/\r\n/g, '\n'))
  })

  it('writes CRLF line ends only and no line longer than 78 characters', () => {
    const ours = buildRawMessage(base, 'shop.example').raw
    assert.doesNotMatch(ours.replace(/\r\n/g, ''), /[\r\n]/)
    for (const line of ours.split('\r\n')) assert.ok(line.length <= 78, line)
  })

  it('signs it so that an independent verifier passes it, unsubscribe headers included', async () => {
    const ours = buildRawMessage(base, 'shop.example').raw
    assert.deepEqual(await verify(ours), ['pass'])
    const h = /\bh=([^;]+)/.exec(ours.split('\r\n\r\n')[0]!.replace(/\s+/g, ''))![1]!
    assert.ok(h.split(':').includes('list-unsubscribe') && h.split(':').includes('list-unsubscribe-post'), h)
    const changed = ours.replace(
      'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
      'List-Unsubscribe-Post: x',
    )
    assert.deepEqual(await verify(changed), ['fail'])
    // mailauth calls a body that no longer matches its hash "neutral": anything but a pass.
    assert.notDeepEqual(await verify(ours.replace('Dobr=C3=BD den', 'Dobr=C3=BD Den')), ['pass'])
  })

  it('signs an indented body in relaxed form: runs of spaces and tabs count as one space', async () => {
    const html = '<table>\n  <tr>\n\t\t<td>  Spring \t offers </td>\n    </tr>\n</table>\n'
    const ours = buildRawMessage({ ...base, text: undefined, html }, 'shop.example').raw
    assert.deepEqual(await verify(ours), ['pass'])
    const body = ours.indexOf('\r\n\r\n')
    const head = ours.slice(0, body)
    // Written without runs of blanks, tabs or blanks at line ends: the body is its own relaxed form.
    assert.doesNotMatch(ours.slice(body), /  |\t| \r\n/)
    // A relay that widens spaces inside lines, or adds some at line ends, leaves a relaxed signature intact; a
    // word does not.
    const widened =
      head +
      '\r\n\r\n' +
      ours
        .slice(body + 4)
        .replace('Spring ', 'Spring \t  ')
        .replace(/\r\n/g, ' \r\n')
    assert.notEqual(widened, ours)
    assert.deepEqual(await verify(widened), ['pass'])
    assert.notDeepEqual(await verify(head + ours.slice(body).replace('Spring', 'Autumn')), ['pass'])
  })

  it('says when SMTP can carry the message as it is: CRLF line ends only, no line starting with a dot', () => {
    const dotted = { ...base, text: '.first\n..\nend.', html: '<p>\n.x</p>' }
    for (const mail of [
      dotted,
      { ...dotted, dkim },
      { ...base, subject: 'Hi\r\n.Bcc', to: [{ name: '.A\nB', address: 'a@example.cz' }] },
    ]) {
      const { pieces, dataSafe } = buildRawPieces(mail, 'shop.example')
      const raw = pieces.join('')
      assert.equal(dataSafe, true)
      assert.doesNotMatch(raw, /\r(?!\n)|(?<!\r)\n|^\.|\n\./)
    }
    // What it checks in the header lines and the signature (MimeNode leaves nothing of the kind in them).
    for (const bad of ['a\nb', 'a\rb', '.a', 'a\r\n.b', 'a\n\r'])
      assert.equal(dataSafeText(bad), false, JSON.stringify(bad))
    for (const good of ['', 'a\r\nb', 'a.b\r\n b.', 'a\r\n\r\n'])
      assert.equal(dataSafeText(good), true, JSON.stringify(good))
  })

  it('keeps CR and LF in any value out of the header lines', async () => {
    const mail = {
      ...base,
      subject: 'Hi\r\nBcc: victim@example.com',
      to: [{ name: 'A\nB', address: 'a@example.cz' }],
    }
    const ours = buildRawMessage(mail, 'shop.example').raw
    assert.doesNotMatch(ours, /^Bcc:/im)
    assert.equal((await simpleParser(ours)).subject, 'Hi Bcc: victim@example.com')
  })

  it('makes a single-part message when there is only HTML or only text', async () => {
    for (const mail of [
      { ...base, text: undefined },
      { ...base, html: undefined },
    ]) {
      const ours = buildRawMessage(mail, 'shop.example').raw
      assert.doesNotMatch(ours, /multipart/i)
      const parsed = await simpleParser(ours)
      if (mail.html) assert.equal(parsed.html, mail.html)
      else assert.equal(parsed.text?.replace(/\r\n/g, '\n'), base.text!.replace(/\r\n/g, '\n'))
      assert.deepEqual(await verify(ours), ['pass'])
    }
  })

  it('writes the header block MimeNode would, byte for byte, each line encoded once or per message', () => {
    const unique = '3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6b'
    const cases: [string, unknown][][] = [
      [
        ['From', { name: 'Obchod "U Lípy", s.r.o.', address: 'news@shop.example' }],
        ['To', [{ name: 'Jana Nováková', address: 'jana@example.cz' }]],
        ['Reply-To', 'help@shop.example'],
        ['Subject', `Žluťoučký kůň: ${LONG}`],
        ['Message-ID', '<42.abc@shop.example>'],
        [
          'List-Unsubscribe',
          `<https://t.shop.example/u/${'NDI'.repeat(20)}.x>, <mailto:unsubscribe+NDI.x@shop.example>`,
        ],
        ['List-Unsubscribe-Post', 'List-Unsubscribe=One-Click'],
        ['X-Campaign', 'spring ✿ sale'],
      ],
      [
        ['From', { name: '', address: 'news@shop.example' }],
        ['To', [{ name: 'Reader, "the first"', address: 'reader@bücher.example' }]],
        ['Subject', ''],
        ['Message-ID', '<1.a@shop.example>'],
      ],
      [
        ['From', { name: 'Shop', address: 'news@shop.example' }],
        ['To', [{ name: 'Reader1 Bench', address: 'reader1@example.cz' }]],
        ['Subject', `New for you, Reader1 ${'and more '.repeat(12)}`],
        ['Message-ID', '<2.b@shop.example>'],
      ],
    ]
    const sameDate = (h: string) => h.replace(/^Date: .*$/m, 'Date: -')
    for (const headers of cases)
      for (const [type, single] of [
        ['multipart/alternative', false],
        ['text/plain; charset=utf-8', true],
        ['text/html; charset=utf-8', true],
      ] as const)
        // Twice: the second takes the remembered lines.
        for (let i = 0; i < 2; i++)
          assert.equal(
            sameDate(headerBlock(headers, type, unique, single)),
            sameDate(mimeNodeHeaders(headers, type, unique, single)),
          )
  })

  it('lets MimeNode build the headers of mail whose own headers name one it writes', async () => {
    const mail = { ...base, headers: { ...base.headers, 'mime-version': '2.0', 'x-one': 'a' } }
    const ours = buildRawMessage(mail, 'shop.example').raw
    assert.match(ours, /^MIME-Version: 2\.0$/m)
    assert.doesNotMatch(ours, /^MIME-Version: 1\.0$/m)
    assert.match(ours, /^X-One: a$/m)
    assert.deepEqual(await verify(ours), ['pass'])
  })

  it('refuses what a bulk message never has (attachments, Cc, Bcc, an AMP part)', () => {
    const cc = { ...base, cc: [{ address: 'c@example.cz' }] }
    assert.throws(() => buildRawMessage(cc, 'shop.example'), /no attachments, Cc, Bcc or AMP part/)
    const amp = { ...base, amp: '<html ⚡4email></html>' }
    assert.throws(() => buildRawMessage(amp, 'shop.example'), /no attachments, Cc, Bcc or AMP part/)
  })
})

describe('dkimSignMessage', () => {
  it('canonicalises folded headers, squeezed spaces and trailing blank lines as RFC 6376 relaxed says', async () => {
    const raw =
      'From:   Shop <news@shop.example>\r\n' +
      'To: jana@example.cz\r\n' +
      'Subject: a  long\r\n\t folded   subject \r\n' +
      'Message-ID: <1@shop.example>\r\n' +
      'X-Not-Signed: 1\r\n' +
      '\r\n' +
      'line with trailing spaces   \r\n' +
      'tabs\t\tand  spaces\r\n' +
      '\r\n' +
      'last\r\n' +
      '\r\n\r\n'
    const signed = dkimSignMessage(raw, dkim)
    assert.deepEqual(await verify(signed), ['pass'])
    assert.match(signed.split('\r\n\r\n')[0]!.replace(/\s+/g, ''), /h=from:subject:message-id:to;/)
    // Relaxed canonicalisation: what only changes whitespace keeps the signature valid.
    const respaced = signed.replace('tabs\t\tand  spaces', 'tabs and spaces').replace(/\r\n\r\n\r\n$/, '\r\n')
    assert.deepEqual(await verify(respaced), ['pass'])
  })

  it('signs a message with an empty body', async () => {
    const signed = dkimSignMessage('From: news@shop.example\r\nSubject: empty\r\n\r\n', dkim)
    assert.deepEqual(await verify(signed), ['pass'])
  })
})
