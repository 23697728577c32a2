import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { startSmtpSink, type SinkMessage, type SmtpSink } from '../../../test/helpers/smtp-sink.js'
import { ManualClock } from '../../core/clock.js'
import { handleInbound, readInboundAddress } from '../bounces/index.js'
import { messageSources } from '../index.js'
import { addDomain, batchState } from './transactional.test-helpers.js'
import { sendOrderMail } from '../../../test/helpers/transactional.js'

async function mailTo(sink: SmtpSink, address: string, timeoutMs = 15_000): Promise<SinkMessage> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = sink.messages.find((m) => m.envelopeTo[0] === address)
    if (found) return found
    if (Date.now() > deadline) throw new Error(`no mail to ${address}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The path of the first URL in the HTML that starts with `prefix` (a tracking pixel or link). */
function pathIn(html: string, prefix: string): string {
  const m = new RegExp(`http://127\\.0\\.0\\.1:3000(${prefix}[^"'\\s>]+)`).exec(html)
  assert.ok(m, `no ${prefix} link`)
  return m[1]!.replace(/&amp;/g, '&')
}

/** A DSN (RFC 3464) reporting a permanent failure for `recipient`, sent back to the mail's VERP return path. */
function dsn(verp: string, recipient: string): Buffer {
  return Buffer.from(
    [
      'From: MAILER-DAEMON@mx.example.net',
      `To: ${verp}`,
      'Subject: Undelivered Mail Returned to Sender',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain',
      '',
      'Your message could not be delivered.',
      '--b1',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.example.net',
      '',
      `Final-Recipient: rfc822; ${recipient}`,
      'Action: failed',
      'Status: 5.1.1',
      'Diagnostic-Code: smtp; 550 5.1.1 user unknown',
      '',
      '--b1--',
      '',
    ].join('\r\n'),
  )
}

const sink = await startSmtpSink({ rcptCode: (a) => (a.startsWith('refused') ? 550 : undefined) })

describe('GET /transactional/stats and /transactional/stats/doi', async () => {
  const clock = new ManualClock(new Date('2026-03-10T09:00:00Z'))
  const t = await startTestApp({ config: { smtpUrl: sink.url }, clock })
  const paid = await t.createAccount('paid')
  const other = await t.createAccount('paid')
  await addDomain(t, paid.id, 'shop.example')
  const stats = (query = '', key = paid.key) => t.req('GET', `/transactional/stats${query}`, { key })
  const doi = (query = '', key = paid.key) => t.req('GET', `/transactional/stats/doi${query}`, { key })

  const send = async (to: string[]) => {
    const id = await sendOrderMail(t, paid.key, to, {
      html: '<html><body><p>Thanks</p><a href="https://shop.example/order/1">Order</a></body></html>',
    })
    assert.equal(await batchState(t, id, ['completed']), 'completed')
  }
  const bounce = async (mail: SinkMessage, recipient: string) => {
    const target = readInboundAddress(t.ctx, mail.envelopeFrom)
    assert.equal(target?.kind, 'verp')
    assert.deepEqual(
      await handleInbound(t.ctx, [target!], dsn(mail.envelopeFrom, recipient), messageSources(t.ctx).lists),
      ['hard_bounce'],
    )
  }

  it('counts nothing before any mail', async () => {
    const res = await stats()
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.deepEqual(res.body, {
      stats: {
        inject: 0,
        delivery: 0,
        delivery_rate: 0,
        open: 0,
        total_open: 0,
        open_rate: 0,
        click: 0,
        total_click: 0,
        click_rate: 0,
        bounce: 0,
        bounce_rate: 0,
        spam: 0,
        spam_rate: 0,
        unsub: 0,
        unsub_rate: 0,
      },
    })
  })

  it("counts the account's transactional mail by contract §5: sends, opens, clicks and a bounce", async () => {
    // Day one: four accepted, one refused by the relay (never injected).
    await send(['a@example.cz', 'b@example.cz', 'c@example.cz', 'd@example.cz', 'refused@example.cz'])
    const a = await mailTo(sink, 'a@example.cz')
    const b = await mailTo(sink, 'b@example.cz')
    const c = await mailTo(sink, 'c@example.cz')
    const open = (m: SinkMessage) => t.req('GET', pathIn(String(m.parsed.html), '/t/o/'), { key: null })
    const click = (m: SinkMessage) => t.req('GET', pathIn(String(m.parsed.html), '/t/c/'), { key: null })
    for (const m of [a, a, b]) assert.equal((await open(m)).status, 200)
    for (const m of [a, a]) assert.equal((await click(m)).status, 302)
    await bounce(c, 'c@example.cz')
    // Day three: one more.
    clock.set(new Date('2026-03-12T15:00:00Z'))
    await send(['e@example.cz'])

    const res = await stats()
    assert.equal(res.status, 200)
    assert.deepEqual(res.body.stats, {
      inject: 5,
      delivery: 4,
      delivery_rate: 80,
      open: 2,
      total_open: 3,
      open_rate: 50,
      click: 1,
      total_click: 2,
      click_rate: 25,
      bounce: 1,
      bounce_rate: 20,
      spam: 0,
      spam_rate: 0,
      unsub: 0,
      unsub_rate: 0,
    })
  })

  it('counts only mail sent within from_date..to_date (UTC days, both inclusive)', async () => {
    const day1 = await stats('?from_date=2026-03-10&to_date=2026-03-11')
    assert.equal(day1.status, 200)
    assert.deepEqual(day1.body.stats, {
      inject: 4,
      delivery: 3,
      delivery_rate: 75,
      open: 2,
      total_open: 3,
      open_rate: 66.67,
      click: 1,
      total_click: 2,
      click_rate: 33.33,
      bounce: 1,
      bounce_rate: 25,
      spam: 0,
      spam_rate: 0,
      unsub: 0,
      unsub_rate: 0,
    })
    const day3 = (await stats('?from_date=2026-03-12&to_date=2026-03-13')).body.stats
    assert.deepEqual([day3.inject, day3.delivery, day3.open, day3.bounce], [1, 1, 0, 0])
    assert.equal((await stats('?from_date=2026-03-11')).body.stats.inject, 1)
    assert.equal((await stats('?to_date=2026-03-11')).body.stats.inject, 4)
    assert.equal((await stats('?from_date=2026-03-13&to_date=2026-03-20')).body.stats.inject, 0)
  })

  it('answers 422 naming the field for a bad or out-of-bounds date', async () => {
    const cases: [string, string][] = [
      ['?from_date=2026-3-1', 'from_date'],
      ['?to_date=yesterday', 'to_date'],
      ['?from_date=2025-03-11', 'from_date'],
      ['?from_date=2026-03-10&to_date=2026-03-10', 'to_date'],
      ['?from_date=2026-03-10&to_date=2026-03-01', 'to_date'],
    ]
    for (const [query, field] of cases) {
      for (const res of [await stats(query), await doi(query)]) {
        assert.equal(res.status, 422, query)
        assert.deepEqual(Object.keys(res.body.errors), [field], query)
      }
    }
    // Exactly one year back is still allowed (the clock stands at 2026-03-12).
    assert.equal((await stats('?from_date=2025-03-12')).status, 200)
  })

  it('counts double opt-in confirmation mail apart, with its opens and bounce', async () => {
    const list = await t.req('POST', '/lists', {
      key: paid.key,
      body: { name: 'News', double_optin: true, from_email: 'news@shop.example' },
    })
    assert.equal(list.status, 200)
    for (const email of ['f@example.cz', 'g@example.cz']) {
      const sub = await t.req('POST', `/lists/${list.body.id}/subscribe`, {
        key: paid.key,
        body: { subscriber_data: { email } },
      })
      assert.equal(sub.status, 200, sub.text)
    }
    const f = await mailTo(sink, 'f@example.cz')
    const g = await mailTo(sink, 'g@example.cz')
    assert.match(f.envelopeFrom, /^bounces\+.*@bounces\.shop\.example$/)
    // The confirmation is recorded once the relay's answer is: wait (bounded) for the second one.
    for (let i = 0; i < 100 && (await doi()).body.stats.inject < 2; i++)
      await new Promise((resolve) => setTimeout(resolve, 50))
    await bounce(f, 'f@example.cz')
    const pixel = pathIn(String(g.parsed.html), '/t/o/')
    for (let i = 0; i < 2; i++) assert.equal((await t.req('GET', pixel, { key: null })).status, 200)

    const res = await doi()
    assert.equal(res.status, 200)
    assert.deepEqual(res.body.stats, {
      inject: 2,
      delivery: 1,
      delivery_rate: 50,
      open: 1,
      total_open: 2,
      open_rate: 100,
      click: 0,
      total_click: 0,
      click_rate: 0,
      bounce: 1,
      bounce_rate: 50,
      spam: 0,
      spam_rate: 0,
      unsub: 0,
      unsub_rate: 0,
    })
    // Neither kind counts the other.
    assert.equal((await stats()).body.stats.inject, 5)
    assert.equal((await doi('?from_date=2026-03-12&to_date=2026-03-13')).body.stats.inject, 2)
    assert.equal((await doi('?from_date=2026-03-10&to_date=2026-03-11')).body.stats.inject, 0)
  })

  it("shows another account none of this account's mail, and needs a key", async () => {
    for (const res of [await stats('', other.key), await doi('', other.key)]) {
      assert.equal(res.status, 200)
      assert.equal(res.body.stats.inject, 0)
      assert.equal(res.body.stats.bounce, 0)
    }
    for (const path of ['/transactional/stats', '/transactional/stats/doi']) {
      const res = await t.req('GET', path, { key: null })
      assert.equal(res.status, 401)
      assert.deepEqual(res.body, { message: 'Unauthorized' })
    }
  })
})
