/**
 * Conversions for real (contract §5): a campaign sent over SMTP, a click through the tracking route, then
 * purchases through `POST /tracker/transaction`; `GET /campaigns/{id}/stats` counts the purchases of
 * recipients from their first click up to 7 days after, and sums their amounts as decimals.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js'
import { queryOne } from '../../src/core/db/sql.js'
import { sqlDateTime } from '../../src/core/http/formats.js'
import {
  createCampaign,
  listWith,
  sendingDomain,
  waitForStatus,
} from '../../src/modules/campaigns/campaign-send.test-helpers.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR

// At file level, so it closes after the app (the app's pooled connections would hold it open otherwise).
const sink: SmtpSink = await startSmtpSink()

describe('campaign conversions from tracker purchases', async () => {
  const t: TestApp = await startTestApp({ config: { smtpUrl: sink.url, sendThreads: 0 } })
  const other = await t.createAccount()
  await sendingDomain(t, t.account)
  const list = await listWith(t, t.account, [
    { email: 'anna@example.cz', name: 'Anna' },
    { email: 'bob@example.cz', name: 'Bob' },
  ])
  const campaignId = await createCampaign(t, t.account, { lists: [list] })

  const buy = async (orderId: string, email: string, amount: number, at: Date, key = t.account.key) => {
    const res = await t.req('POST', '/tracker/transaction', {
      key,
      body: {
        transaction: { order_id: orderId, email, shop: 'shop.example', amount, timestamp: sqlDateTime(at) },
      },
    })
    assert.equal(res.status, 200, res.text)
  }
  const stats = async () => {
    const res = await t.req('GET', `/campaigns/${campaignId}/stats`)
    assert.equal(res.status, 200, res.text)
    return res.body.stats as { click: number; conversions: number; conversions_value: number }
  }

  it('counts purchases after a tracked click, within 7 days, by recipients only', async () => {
    assert.equal((await t.req('POST', `/campaigns/${campaignId}/send`)).status, 200)
    assert.equal((await waitForStatus(t, campaignId, [3, 4])).status, 3)
    const anna = sink.messages.find((m) => m.envelopeTo.includes('anna@example.cz'))
    assert.ok(anna, 'the campaign reached the sink')
    const html = typeof anna.parsed.html === 'string' ? anna.parsed.html : ''
    const link = /http:\/\/[^"]+(\/t\/c\/[^"]+)/.exec(html)?.[1]
    assert.ok(link, 'a tracked link')
    assert.deepEqual(await stats().then((s) => [s.conversions, s.conversions_value]), [0, 0])

    const click = await t.req('GET', link.replace(/&amp;/g, '&'), { key: null })
    assert.equal(click.status, 302)
    assert.equal((await stats()).click, 1)
    const row = await queryOne<{ at: Date | string }>(
      t.ctx.db,
      sql`SELECT first_click_at AS at FROM messages WHERE campaign_id = ${campaignId} AND email = 'anna@example.cz'`,
    )
    const clickedAt = new Date(row!.at)
    // Times on the wire have whole seconds: keep every purchase clear of the click's own second.
    await buy('before', 'anna@example.cz', 1000, new Date(clickedAt.getTime() - HOUR))
    await buy('day-1', 'anna@example.cz', 0.1, new Date(clickedAt.getTime() + DAY))
    await buy('day-6', 'anna@example.cz', 0.2, new Date(clickedAt.getTime() + 6 * DAY))
    await buy('day-8', 'anna@example.cz', 2000, new Date(clickedAt.getTime() + 8 * DAY))
    await buy('no-click', 'bob@example.cz', 3000, new Date(clickedAt.getTime() + DAY))
    await buy('stranger', 'nobody@example.cz', 4000, new Date(clickedAt.getTime() + DAY))
    await buy('theirs', 'anna@example.cz', 5000, new Date(clickedAt.getTime() + DAY), other.key)

    const s = await stats()
    assert.equal(s.conversions, 2)
    assert.equal(s.conversions_value, 0.3, 'decimal sum, not 0.30000000000000004')

    // An order moved out of the window by PUT stops counting; one deleted stops counting.
    const put = await t.req('PUT', '/tracker/transaction/day-6', {
      body: {
        transaction: {
          email: 'anna@example.cz',
          amount: 0.2,
          timestamp: sqlDateTime(new Date(clickedAt.getTime() + 9 * DAY)),
        },
      },
    })
    assert.equal(put.status, 200)
    assert.deepEqual(await stats().then((x) => [x.conversions, x.conversions_value]), [1, 0.1])
    assert.deepEqual((await t.req('DELETE', '/tracker/transaction/day-1/delete')).body, { deleted: true })
    assert.deepEqual(await stats().then((x) => [x.conversions, x.conversions_value]), [0, 0])
  })
})
