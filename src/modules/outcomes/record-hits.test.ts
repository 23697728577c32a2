import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { queryRows } from '../../core/db/sql.js'
import { insertCampaign, insertRecipients, LINKS } from '../campaigns/campaign-stats.test-helpers.js'
import { findMessage } from '../messages/index.js'
import { createEventRecorder } from './event-recorder.js'
import { readCounters } from '../events/index.js'

const NOW = new Date('2026-05-06T07:08:09.000Z')

/**
 * Opens and clicks arriving together are written in shared batches (one statement each): whatever lands in
 * one batch, every hit is logged, counted in the totals and queued for the webhook, and each message counts
 * once in the unique figures, however its hits fall across batches.
 */
describe('concurrent opens and clicks', async () => {
  const t = await startTestApp({ clock: new ManualClock(NOW), worker: false })
  const campaignId = await insertCampaign(t, t.account.id)
  const emails = Array.from({ length: 12 }, (_, i) => `hit${i}@example.cz`)
  const recipients = await insertRecipients(t, t.account.id, campaignId, emails, NOW)
  await t.ctx.db.execute(sql`INSERT INTO account_webhooks (account_id, url, secret, created_at, updated_at)
    VALUES (${t.account.id}, 'https://hooks.example/in', 'whsec_test', now(), now())`)
  const recorder = createEventRecorder(t.ctx)
  const links = async () => LINKS

  it('counts every hit, and each message once, with hits of one message in one batch and across batches', async () => {
    // Every recipient opened 5 times and clicked each link once or twice, all at once, plus hits of a
    // message that does not exist, which must not spoil the batches they share.
    const calls: Promise<unknown>[] = []
    for (let round = 0; round < 5; round++) {
      for (const m of recipients) {
        calls.push(recorder.opened(m.id))
        if (round < 2) calls.push(recorder.clicked(m.id, round % 2, links))
        if (round === 0) calls.push(recorder.clicked(m.id, 1, links))
      }
      calls.push(recorder.opened(987_654_321))
    }
    const answers = await Promise.all(calls)
    assert.equal(answers.filter((a) => a === false).length, 5, 'the missing message answers false, 5 times')
    assert.equal(answers.filter((a) => a === true).length, 60)
    assert.equal(answers.filter((a) => typeof a === 'string').length, 36)

    const counters = await readCounters(t.ctx.db, { campaignId })
    assert.equal(counters.total_open, 60)
    assert.equal(counters.open, 12)
    assert.equal(counters.total_click, 36)
    assert.equal(counters.click, 12)

    const logged = await queryRows<{ event: string; n: number }>(
      t.ctx.db,
      sql`SELECT event, count(*)::int AS n FROM events WHERE campaign_id = ${campaignId} AND event <> 'send' GROUP BY event`,
    )
    assert.deepEqual(Object.fromEntries(logged.map((r) => [r.event, r.n])), { open: 60, click: 36 })

    const queued = await queryRows<{ type: string; url: string | null; subject: string; rcpt: string }>(
      t.ctx.db,
      sql`SELECT payload ->> 'type' AS type, payload ->> 'target_link_url' AS url, payload ->> 'subject' AS subject,
                 payload ->> 'rcpt_to' AS rcpt
          FROM webhook_outbox WHERE account_id = ${t.account.id}`,
    )
    assert.equal(queued.filter((q) => q.type === 'open').length, 60)
    assert.equal(queued.filter((q) => q.type === 'click').length, 36)
    assert.ok(queued.every((q) => q.subject === 'Spring sale' && emails.includes(q.rcpt)))
    assert.deepEqual(new Set(queued.filter((q) => q.type === 'click').map((q) => q.url)), new Set(LINKS))

    for (const m of recipients) {
      const row = await findMessage(t.ctx.db, m.id)
      assert.deepEqual(row!.firstOpenAt, NOW)
      assert.deepEqual(row!.firstClickAt, NOW)
    }
  })

  it('counts a later hit of a message in the totals only', async () => {
    const m = recipients[0]!
    assert.equal(await recorder.clicked(m.id, 0, links), LINKS[0])
    assert.equal(await recorder.opened(m.id), true)
    const counters = await readCounters(t.ctx.db, { campaignId })
    assert.deepEqual(
      [counters.open, counters.total_open, counters.click, counters.total_click],
      [12, 61, 12, 37],
    )
  })
})
