import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import nodemailer from 'nodemailer'
import { simpleParser } from 'mailparser'
import { dkimResults, testDkimKey } from '../../../test/helpers/dkim.js'
import { loadConfig } from '../config.js'
import { toNodemailer } from './compose.js'
import { parseVerpAddress } from './verp.js'
import { composeMessage, messageIdHeader } from './compose-message.js'

const ctx = {
  config: { ...loadConfig({}), publicUrl: 'https://mail.shop.example' },
  linkSecret: 'test-secret',
}
const { dkim, published } = testDkimKey()

async function raw(mail: ReturnType<typeof composeMessage>['mail']): Promise<string> {
  const t = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' })
  const info = await t.sendMail(toNodemailer(mail, 'shop.example'))
  return (info.message as Buffer).toString()
}

describe('composeMessage', () => {
  const content = {
    messageId: 42,
    from: { name: 'Shop', address: 'news@shop.example' },
    to: { name: 'Eva', address: 'eva@example.com' },
    subject: 'Hello',
    html: '<html><body><p><a href="https://shop.example/a?x=1&amp;y=2">A</a> <a href="https://shop.example/a?x=1&amp;y=2">again</a> <a href="mailto:x@y.z">m</a></p></body></html>',
    trackOpens: true,
    trackClicks: true,
    marketing: true,
    bounceDomain: 'bounces.shop.example',
    dkim,
  }

  it('rewrites each distinct http link once and keeps others', () => {
    const { mail, links } = composeMessage(ctx, content)
    assert.deepEqual(links, ['https://shop.example/a?x=1&y=2'])
    assert.equal((mail.html!.match(/\/t\/c\//g) ?? []).length, 2)
    assert.match(mail.html!, /href="mailto:x@y.z"/)
    assert.match(mail.html!, /<img src="https:\/\/mail\.shop\.example\/t\/o\/[^"]+\.gif"[^>]*><\/body>/)
    assert.match(mail.text!, /\/t\/c\//)
  })

  it('marks marketing mail for one-click unsubscribe and signs both headers with DKIM', async () => {
    const { mail } = composeMessage(ctx, content)
    assert.equal(parseVerpAddress('test-secret', mail.returnPath!), 'm42')
    const message = await raw(mail)
    const unfolded = message.split('\r\n\r\n')[0]!.replace(/\r\n[ \t]+/g, ' ')
    const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(unfolded)?.[1] ?? ''
    assert.match(
      header('List-Unsubscribe'),
      /^<https:\/\/mail\.shop\.example\/u\/[^>]+>, <mailto:unsubscribe\+[^@]+@bounces\.shop\.example>$/,
    )
    assert.equal(header('List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click')
    assert.equal((await simpleParser(message)).subject, 'Hello')
    const sig = header('DKIM-Signature')
    const h = /\bh=([^;]+)/.exec(sig.replace(/\s+/g, ''))![1]!.toLowerCase()
    assert.ok(h.includes('list-unsubscribe:') && h.includes('list-unsubscribe-post'), h)
    const results = await dkimResults(message, published)
    assert.equal(results[0]?.status.result, 'pass')
  })

  it('sends transactional mail without unsubscribe headers and without tracking when asked', () => {
    const { mail, links } = composeMessage(ctx, {
      ...content,
      marketing: false,
      trackClicks: false,
      trackOpens: false,
    })
    assert.deepEqual(links, [])
    assert.equal(mail.headers?.['List-Unsubscribe'], undefined)
    assert.doesNotMatch(mail.html!, /\/t\/[oc]\//)
  })

  it('gives a row the same Message-ID every time it is composed (a resend after a crash), unique per row and secret', () => {
    const first = composeMessage(ctx, content).mail.messageId
    assert.equal(composeMessage(ctx, content).mail.messageId, first)
    assert.match(first!, /^<42\.[A-Za-z0-9_-]{16,}@bounces\.shop\.example>$/)
    assert.notEqual(composeMessage(ctx, { ...content, messageId: 43 }).mail.messageId, first)
    const again = (secret: string, to: string, subject: string) =>
      messageIdHeader(secret, 42, 'bounces.shop.example', to, subject)
    assert.equal(again('test-secret', 'eva@example.com', 'Hello'), first)
    assert.notEqual(again('another-secret', 'eva@example.com', 'Hello'), first)
    // Row 42 again after a restore, for someone else or with another subject: another ID.
    assert.notEqual(again('test-secret', 'adam@example.com', 'Hello'), first)
    assert.notEqual(again('test-secret', 'eva@example.com', 'Your order'), first)
  })
})
