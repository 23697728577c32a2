import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { and, eq, sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { queryRows } from '../../core/db/sql.js'
import { events, readCounters, type EventType } from '../events/index.js'
import { findMessage, messages } from '../messages/index.js'
import { readCampaignDetailStats, readCampaignStats, percent } from './campaign-stats.service.js'
import {
  at,
  buildCampaignScenario,
  driver,
  insertCampaign,
  insertRecipients,
  LINKS,
  R,
} from './campaign-stats.test-helpers.js'

/** Every number below is worked out by hand from the scenario described in campaign-stats.test-helpers.ts. */
const ALL_TIME = {
  inject: 9,
  delivery: 7, // 9 − 2 bounced (r7 hard; r8 soft then hard, once)
  delivery_rate: 77.78, // 7/9 = 77.777…
  open: 5,
  total_open: 8,
  open_rate: 71.43, // 5/7 = 71.428…
  click: 2,
  total_click: 3,
  click_rate: 28.57, // 2/7 = 28.571…
  bounce: 2,
  bounce_rate: 22.22, // 2/9 = 22.222…
  spam: 1,
  spam_rate: 14.29, // 1/7 = 14.285…
  unsub: 1,
  unsub_rate: 14.29,
  conversions: 3,
  // 100.1 + 50.2 + 25.3: summed as decimals (as floats they would give 175.60000000000002)
  conversions_value: 175.6,
}

describe('campaign statistics', async () => {
  const clock = new ManualClock(at('2026-03-10T08:00:00.000Z'))
  const t = await startTestApp({ clock, worker: false })
  const other = await t.createAccount()
  const scenario = await buildCampaignScenario(t, clock, other.id)
  const id = scenario.id
  const stats = (query = '', key?: string, campaign = id) =>
    t.req('GET', `/campaigns/${campaign}/stats${query}`, key ? { key } : {})

  it('answers every field of contract §5 without a range', async () => {
    const res = await stats()
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.deepEqual(res.body, { stats: ALL_TIME })
  })

  it('keeps the counters in step with the events they count', async () => {
    const n = async (event: EventType) =>
      (
        await t.ctx.db
          .select()
          .from(events)
          .where(and(eq(events.campaignId, id), eq(events.event, event)))
      ).length
    const c = await readCounters(t.ctx.db, { campaignId: id })
    assert.equal(c.total_open, await n('open'))
    assert.equal(c.total_click, await n('click'))
    assert.equal(c.inject, await n('send'))
    assert.equal(c.unsub, await n('unsub'))
    assert.equal(c.spam, await n('spam_complaint'))
    // r7 and r8 each once; refused@'s hard bounce is in the log but was never injected.
    assert.equal(await n('hard_bounce'), 3)
    assert.equal(c.hard_bounce, 2)
    assert.equal(await n('soft_bounce'), 2, 'every soft bounce is logged')
    assert.equal(c.soft_bounce, 1, 'but a message counts once')
    const r8 = await findMessage(t.ctx.db, scenario.recipients[8]!.id)
    assert.deepEqual(r8!.softBouncedAt, at('2026-03-10T15:00:00.000Z'))
    assert.deepEqual(r8!.bouncedAt, at('2026-03-11T11:30:00.000Z'))
  })

  it('adds unique opens and clicks within a range, both days inclusive', async () => {
    const cases: [string, number, number][] = [
      // r2 (03-11), r3 (03-11 and 03-12 23:59:59.999), r0 (03-12); r4's open at 03-13 00:00 is out.
      ['?from_date=2026-03-11&to_date=2026-03-12', 3, 2],
      ['?from_date=2026-03-12', 3, 2], // r0, r3, r4; clicks r0, r1
      ['?to_date=2026-03-10', 2, 0], // r0, r1
      ['?from_date=2026-03-13', 1, 0], // r4
      ['?from_date=2026-03-10&to_date=2026-03-11', 4, 1], // r0, r1, r2, r3; r0's first click
      ['?from_date=2026-03-10&to_date=2026-03-13', 5, 2], // the whole campaign: the unique counters
      ['?from_date=2026-03-01', 5, 2],
      ['?from_date=2025-03-13&to_date=2025-03-14', 0, 0], // exactly one year back is allowed
    ]
    for (const [query, opened, clicked] of cases) {
      const res = await stats(query)
      assert.equal(res.status, 200, query)
      assert.deepEqual(
        res.body,
        { stats: { ...ALL_TIME, opened_in_range: opened, clicked_in_range: clicked } },
        query,
      )
    }
    const empty = await stats('?from_date=&to_date=')
    assert.deepEqual(empty.body, { stats: ALL_TIME }, 'empty values are no range')
  })

  it('rejects bad dates with 422 naming the field', async () => {
    const cases: [string, string][] = [
      ['?from_date=2026-3-1', 'from_date'],
      ['?from_date=2026-02-30', 'from_date'],
      ['?from_date=13.03.2026', 'from_date'],
      ['?from_date=2026-03-01T00:00:00Z', 'from_date'],
      ['?from_date=2025-03-12', 'from_date'], // one year and a day back (now is 2026-03-13)
      ['?to_date=tomorrow', 'to_date'],
      ['?from_date=2026-03-12&to_date=2026-03-12', 'to_date'],
      ['?from_date=2026-03-12&to_date=2026-03-11', 'to_date'],
    ]
    for (const [query, field] of cases) {
      const res = await stats(query)
      assert.equal(res.status, 422, query)
      assert.deepEqual(Object.keys(res.body.errors), [field], query)
      assert.equal(typeof res.body.errors[field][0], 'string')
    }
  })

  it("answers 404 for a missing campaign and for another account's", async () => {
    for (const res of [await stats('', undefined, 999_999), await stats('', other.key)]) {
      assert.equal(res.status, 404)
      assert.equal(res.headers['content-type'], 'application/json')
      assert.deepEqual(Object.keys(res.body), ['message'])
    }
    const theirs = await insertCampaign(t, other.id, 'Theirs')
    assert.equal((await stats('', undefined, theirs)).status, 404)
    assert.equal((await stats('', other.key, theirs)).status, 200)
    assert.equal((await t.req('GET', '/campaigns/abc/stats')).status, 404)
    assert.equal((await t.req('GET', `/campaigns/${id}/stats`, { key: null })).status, 401)
  })

  it('answers zeros and zero rates for a campaign with nothing sent yet', async () => {
    const draft = await insertCampaign(t, t.account.id, 'Draft')
    const res = await stats('', undefined, draft)
    assert.equal(res.status, 200)
    for (const [name, value] of Object.entries(res.body.stats)) assert.equal(value, 0, name)
  })

  it('gives the detail statistics of the campaign detail', async () => {
    assert.deepEqual(await readCampaignDetailStats(t.ctx.db, id), {
      inject: 9,
      send: 7,
      delivered: 7,
      open: 5,
      total_open: 8,
      click: 2,
      total_click: 3,
      hard_bounce: 2,
      spam: 1,
      unsub: 1,
      openrate: 71.43,
      clickrate: 28.57,
      delivery_rate: 77.78,
    })
    const ranged = await readCampaignStats(t.ctx.db, id, {
      from: at('2026-03-12T00:00:00.000Z'),
      to: at('2026-03-12T12:00:00.000Z'),
    })
    assert.equal(ranged.opened_in_range, 0, 'to is exclusive: the 12:00 open is out')
    assert.equal(ranged.clicked_in_range, 2)
  })

  it('counts sends through the recorder as inject, but never transactional mail', async () => {
    const second = await insertCampaign(t, t.account.id, 'Second')
    const [queued] = await insertRecipients(t, t.account.id, second, [R(0)], clock.now(), 0)
    const [receipt] = await t.ctx.db
      .insert(messages)
      .values({ accountId: t.account.id, kind: 'transactional', email: 'receipt@example.cz' })
      .returning()
    const d = driver(t, clock)
    await d.sent(queued!, '2026-03-13T10:00:00.000Z')
    await d.sent(receipt!, '2026-03-13T10:00:00.000Z')
    await d.open(receipt!, '2026-03-13T10:05:00.000Z')
    assert.equal((await readCounters(t.ctx.db, { campaignId: second })).inject, 1)
    const stray = await queryRows<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM stat_counters WHERE campaign_id = 0 AND pipeline_id = 0`,
    )
    assert.equal(stray[0]!.n, 0)
  })

  it('counts automation mail per mail node', async () => {
    const [mail] = await t.ctx.db
      .insert(messages)
      .values({
        accountId: t.account.id,
        kind: 'automation',
        pipelineId: 5,
        actionId: 'mail-1',
        email: R(1),
        status: 1,
        links: LINKS,
      })
      .returning()
    const d = driver(t, clock)
    await d.open(mail!, '2026-03-13T10:10:00.000Z')
    await d.open(mail!, '2026-03-13T10:11:00.000Z')
    await d.click(mail!, 1, '2026-03-13T10:12:00.000Z')
    await d.bounce(mail!, 'soft', '2026-03-13T10:13:00.000Z')
    const c = await readCounters(t.ctx.db, { campaignId: 0, pipelineId: 5, actionId: 'mail-1' })
    assert.deepEqual(
      {
        open: c.open,
        total_open: c.total_open,
        click: c.click,
        soft_bounce: c.soft_bounce,
        bounce: c.bounce,
      },
      { open: 1, total_open: 2, click: 1, soft_bounce: 1, bounce: 1 },
    )
  })

  it('rounds percentages half up to two decimals, 0 without a divisor', () => {
    assert.equal(percent(1, 3), 33.33)
    assert.equal(percent(2, 3), 66.67)
    assert.equal(percent(1, 8), 12.5)
    assert.equal(percent(1, 20_000), 0.01) // exactly 0.005 % rounds up
    assert.equal(percent(1, 20_001), 0)
    assert.equal(percent(7, 7), 100)
    assert.equal(percent(5, 0), 0)
  })
})
