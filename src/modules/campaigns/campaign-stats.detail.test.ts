import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { messages } from '../messages/index.js'
import {
  at,
  buildCampaignScenario,
  driver,
  insertCampaign,
  insertRecipients,
  R,
} from './campaign-stats.test-helpers.js'

const ISO_MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/
const zero = { open: 0, send: 0, click: 0, unsub: 0, hard_bounce: 0, soft_bounce: 0, out_of_band: 0, spam: 0 }
/** Per recipient, by hand from the scenario in campaign-stats.test-helpers.ts, in recipient order. */
const DETAIL = {
  [R(0)]: { ...zero, open: 3, send: 1, click: 2 },
  [R(1)]: { ...zero, open: 1, send: 1, click: 1 },
  [R(2)]: { ...zero, open: 1, send: 1, unsub: 1 },
  [R(3)]: { ...zero, open: 2, send: 1, spam: 1 },
  [R(4)]: { ...zero, open: 1, send: 1 },
  [R(5)]: { ...zero, send: 1 },
  [R(6)]: { ...zero, send: 1 },
  [R(7)]: { ...zero, send: 1, hard_bounce: 1 },
  [R(8)]: { ...zero, send: 1, soft_bounce: 2, hard_bounce: 1 },
  'refused@example.cz': { ...zero, hard_bounce: 1 },
}
const ENTRY_KEYS = [
  'action_id',
  'autoresponder_id',
  'campaign_id',
  'email',
  'event',
  'id',
  'mail_name',
  'msg',
  'occured_at',
  'url',
]

describe('campaign stats-detail and logs', async () => {
  const clock = new ManualClock(at('2026-03-10T08:00:00.000Z'))
  const t = await startTestApp({ clock, worker: false })
  const other = await t.createAccount()
  const { id } = await buildCampaignScenario(t, clock, other.id)
  const base = t.ctx.config.publicUrl
  const detail = (query = '', key?: string, campaign = id) =>
    t.req('GET', `/campaigns/${campaign}/stats-detail${query}`, key ? { key } : {})
  const log = (query = '', key?: string, campaign: number | null = id) =>
    t.req(
      'GET',
      campaign === null ? `/campaigns/log${query}` : `/campaigns/${campaign}/log${query}`,
      key ? { key } : {},
    )

  // A second campaign of the account with one send, another account's campaign, and a transactional mail.
  const second = await insertCampaign(t, t.account.id, 'Second')
  const [next] = await insertRecipients(t, t.account.id, second, [R(5)], clock.now(), 0)
  await driver(t, clock).sent(next!, '2026-03-13T11:00:00.000Z')
  const theirs = await insertCampaign(t, other.id, 'Theirs')
  const [theirMail] = await insertRecipients(t, other.id, theirs, [R(0)], clock.now(), 0)
  await driver(t, clock).sent(theirMail!, '2026-03-13T11:30:00.000Z')
  const [receipt] = await t.ctx.db
    .insert(messages)
    .values({ accountId: t.account.id, kind: 'transactional', email: R(0), subject: 'Receipt' })
    .returning()
  await driver(t, clock).sent(receipt!, '2026-03-13T11:45:00.000Z')
  clock.set(at('2026-03-13T12:00:00.000Z'))

  describe('GET /campaigns/{id}/stats-detail', () => {
    it('lists every recipient with the count of each of its events; skipped rows are none', async () => {
      const res = await detail()
      assert.equal(res.status, 200)
      assert.equal(res.headers['content-type'], 'application/json')
      assert.deepEqual(res.body, { total: 10, per_page: 100, next_page_url: null, subscribers: DETAIL })
      assert.deepEqual(Object.keys(res.body.subscribers), Object.keys(DETAIL), 'in recipient order')
    })

    it('pages with page and per_page, next_page_url absolute under PUBLIC_URL, null on the last page', async () => {
      const emails = Object.keys(DETAIL)
      const first = await detail('?per_page=4')
      assert.equal(first.body.total, 10)
      assert.equal(first.body.per_page, 4)
      assert.deepEqual(Object.keys(first.body.subscribers), emails.slice(0, 4))
      assert.equal(first.body.next_page_url, `${base}/campaigns/${id}/stats-detail?page=2&per_page=4`)
      const secondPage = await detail(first.body.next_page_url.slice(base.length).replace(/^.*\?/, '?'))
      assert.deepEqual(Object.keys(secondPage.body.subscribers), emails.slice(4, 8))
      const last = await detail('?per_page=4&page=3')
      assert.deepEqual(Object.keys(last.body.subscribers), emails.slice(8))
      assert.equal(last.body.next_page_url, null)
      const beyond = await detail('?page=5')
      assert.deepEqual(beyond.body, { total: 10, per_page: 100, next_page_url: null, subscribers: {} })
      assert.equal((await detail('?per_page=5000')).status, 200)
    })

    it('filters by event, email and from_date', async () => {
      const spam = await detail('?event=spam')
      assert.deepEqual(spam.body, {
        total: 1,
        per_page: 100,
        next_page_url: null,
        subscribers: { [R(3)]: DETAIL[R(3)] },
      })
      const bounced = await detail('?event=hard_bounce&per_page=1')
      assert.equal(bounced.body.total, 3)
      assert.equal(
        bounced.body.next_page_url,
        `${base}/campaigns/${id}/stats-detail?page=2&per_page=1&event=hard_bounce`,
      )
      const one = await detail('?email=%20R0@Example.CZ')
      assert.deepEqual(one.body.subscribers, { [R(0)]: DETAIL[R(0)] })
      assert.equal(one.body.total, 1)
      // From 03-12: r0's third open and second click, r1's click, r3's second open, r4's open.
      const recent = await detail('?from_date=2026-03-12&event=open')
      assert.deepEqual(recent.body.subscribers, {
        [R(0)]: { ...zero, open: 1, click: 1 },
        [R(3)]: { ...zero, open: 1 },
        [R(4)]: { ...zero, open: 1 },
      })
      assert.equal((await detail('?email=nobody@example.cz')).body.total, 0)
    })

    it('rejects bad paging, events and dates with 422 naming the field', async () => {
      const cases: [string, string][] = [
        ['?per_page=5001', 'per_page'],
        ['?per_page=0', 'per_page'],
        ['?page=x', 'page'],
        ['?event=bogus', 'event'],
        ['?from_date=2026/03/12', 'from_date'],
        ['?from_date=2024-01-01', 'from_date'],
      ]
      for (const [query, field] of cases) {
        const res = await detail(query)
        assert.equal(res.status, 422, query)
        assert.deepEqual(Object.keys(res.body.errors), [field], query)
      }
    })

    it("answers 404 for another account's campaign and a missing one", async () => {
      assert.equal((await detail('', other.key)).status, 404)
      assert.equal((await detail('', undefined, theirs)).status, 404)
      const missing = await detail('', undefined, 999_999)
      assert.equal(missing.status, 404)
      assert.deepEqual(Object.keys(missing.body), ['message'])
      assert.equal((await detail('', other.key, theirs)).body.total, 1)
    })
  })

  describe('GET /campaigns/{id}/log', () => {
    it('answers the events of the campaign newest first, as email log entries with their id', async () => {
      const res = await log()
      assert.equal(res.status, 200)
      assert.deepEqual(Object.keys(res.body).sort(), [
        'campaign_log',
        'current_page',
        'last_page',
        'per_page',
        'total',
      ])
      // 9 sends, 8 opens, 3 clicks, 1 unsub, 3 hard bounces (r7, r8, refused@), 2 soft (r8), 1 complaint.
      assert.equal(res.body.total, 27)
      assert.equal(res.body.per_page, 20)
      assert.equal(res.body.last_page, 2)
      assert.equal(res.body.current_page, 1)
      assert.equal(res.body.campaign_log.length, 20)
      for (const entry of res.body.campaign_log) {
        assert.deepEqual(Object.keys(entry).sort(), ENTRY_KEYS)
        assert.match(entry.occured_at, ISO_MICRO)
        assert.equal(entry.campaign_id, id)
      }
      const [newest] = res.body.campaign_log
      assert.equal(typeof newest.id, 'number')
      assert.deepEqual(
        { ...newest, id: 0 },
        {
          id: 0,
          campaign_id: id,
          autoresponder_id: null,
          action_id: null,
          event: 'open',
          msg: null,
          url: null,
          email: R(4),
          occured_at: '2026-03-13T00:00:00.000000Z',
          mail_name: 'Spring',
        },
      )
      const all = (await log('?per_page=100')).body.campaign_log as { occured_at: string; id: number }[]
      assert.equal(all.length, 27)
      const order = all.map((e) => `${e.occured_at} ${String(e.id).padStart(12, '0')}`)
      assert.deepEqual(order, [...order].sort().reverse(), 'newest first, then highest id')
      const rest = await log('?page=2')
      assert.equal(rest.body.campaign_log.length, 7)
      assert.deepEqual(rest.body.campaign_log, all.slice(20))
    })

    it('filters by events[] in every spelling, rejects unknown types and per_page over 100', async () => {
      assert.equal((await log('?events[]=open&events[]=click')).body.total, 11)
      const bounces = (await log('?events[0]=hard_bounce&per_page=100')).body
      assert.equal(bounces.total, 3)
      assert.deepEqual(
        bounces.campaign_log.map((e: { email: string }) => e.email),
        ['refused@example.cz', R(8), R(7)],
      )
      assert.equal(bounces.campaign_log[0].msg, '5.1.1 hard')
      const clicks = (await log('?events=click')).body
      assert.deepEqual(
        clicks.campaign_log.map((e: { url: string }) => e.url),
        ['https://shop.example/a', 'https://shop.example/b', 'https://shop.example/a'],
      )
      assert.equal((await log('?events[]=spam_complaint')).body.total, 1)
      // Complaints are logged as spam_complaint; a filter for spam finds them, as stats-detail's spam counts them.
      const spam = (await log('?events[]=spam')).body
      assert.deepEqual(
        spam.campaign_log.map((e: { event: string }) => e.event),
        ['spam_complaint'],
      )
      assert.equal((await log('?events[]=out_of_band')).body.total, 0)
      const bad = await log('?events[]=bogus')
      assert.equal(bad.status, 422)
      assert.deepEqual(Object.keys(bad.body.errors), ['events'])
      const big = await log('?per_page=101')
      assert.equal(big.status, 422)
      assert.deepEqual(Object.keys(big.body.errors), ['per_page'])
    })

    it("answers 404 for another account's campaign", async () => {
      assert.equal((await log('', other.key)).status, 404)
      assert.equal((await log('', undefined, theirs)).status, 404)
      assert.equal((await log('', undefined, 999_999)).status, 404)
    })
  })

  describe('GET /campaigns/log', () => {
    it("answers every campaign's events of the account, never transactional mail or another account's", async () => {
      const res = await log('', undefined, null)
      assert.equal(res.status, 200)
      assert.equal(res.body.total, 28)
      assert.deepEqual(
        { ...res.body.campaign_log[0], id: 0 },
        {
          id: 0,
          campaign_id: second,
          autoresponder_id: null,
          action_id: null,
          event: 'send',
          msg: null,
          url: null,
          email: R(5),
          occured_at: '2026-03-13T11:00:00.000000Z',
          mail_name: 'Second',
        },
      )
      assert.equal(res.body.campaign_log[1].occured_at, '2026-03-13T00:00:00.000000Z')
      assert.equal((await log('?events[]=send', undefined, null)).body.total, 10)
      const theirsLog = await log('', other.key, null)
      assert.equal(theirsLog.body.total, 1)
      assert.equal(theirsLog.body.campaign_log[0].campaign_id, theirs)
      const stranger = await t.createAccount()
      assert.deepEqual((await log('', stranger.key, null)).body, {
        campaign_log: [],
        current_page: 1,
        per_page: 20,
        total: 0,
        last_page: 1,
      })
      assert.equal((await t.req('GET', '/campaigns/log', { key: null })).status, 401)
    })

    it('keeps one campaign (campaign_id) and one recipient (email), as Ecomail clients filter it', async () => {
      const all = (query: string) => log(query, undefined, null)
      const of = (res: Awaited<ReturnType<typeof all>>, field: string) =>
        [...new Set(res.body.campaign_log.map((e: Record<string, unknown>) => e[field]))].sort()
      const second1 = await all(`?campaign_id=${second}`)
      assert.deepEqual([second1.status, second1.body.total, of(second1, 'campaign_id')], [200, 1, [second]])
      const first = await all(`?campaign_id=${id}&per_page=100`)
      assert.equal(first.body.total, (await log('?per_page=100')).body.total)
      assert.deepEqual(of(first, 'campaign_id'), [id])
      const person = await all(`?email=${encodeURIComponent(R(5).toUpperCase())}`)
      assert.deepEqual(
        [person.body.total, of(person, 'email'), of(person, 'campaign_id')],
        [2, [R(5)], [id, second].sort()],
      )
      // R(0) also got mail of another account's campaign and a receipt: neither is in this log.
      const opens = await all(`?email=${R(0)}&campaign_id=${id}&events[]=open`)
      assert.deepEqual([opens.body.total, of(opens, 'event')], [3, ['open']])
      const inCampaign = await log(`?email=${R(0)}`)
      assert.deepEqual([inCampaign.body.total, of(inCampaign, 'email')], [6, [R(0)]])
      assert.equal((await all('?email=%20')).body.total, 28)
      assert.equal((await all('?campaign_id=&email=')).body.total, 28)
      assert.equal((await all(`?campaign_id=${theirs}`)).status, 404)
      const bad = await all('?campaign_id=abc')
      assert.deepEqual([bad.status, Object.keys(bad.body.errors)], [422, ['campaign_id']])
    })

    it('runs oldest first with sort_dir=asc, in both logs and for one recipient; sort_by names the time', async () => {
      const times = (res: Awaited<ReturnType<typeof log>>) =>
        res.body.campaign_log.map((e: { occured_at: string; id: number }) => `${e.occured_at}#${e.id}`)
      for (const [campaign, person] of [
        [id, ''],
        [null, ''],
        [null, `&email=${R(0)}`],
      ] as const) {
        const newest = await log(`?per_page=100${person}`, undefined, campaign)
        const oldest = await log(
          `?per_page=100&sort_by=occured_at&sort_dir=asc${person}`,
          undefined,
          campaign,
        )
        assert.equal(oldest.status, 200)
        assert.ok(newest.body.total > 1)
        assert.deepEqual(times(oldest), [...times(newest)].reverse(), `${campaign} ${person}`)
        // Paging runs the same way: page 2 of 5 is the sixth to tenth oldest.
        const page2 = await log(`?per_page=5&page=2&sort_dir=asc${person}`, undefined, campaign)
        assert.deepEqual(times(page2), times(oldest).slice(5, 10))
      }
      const same = await log('?sort_by=occurred_at&sort_dir=desc&per_page=100')
      assert.deepEqual(times(same), times(await log('?per_page=100')))
      const upper = await log('?sort_by=timestamp&sort_dir=ASC&per_page=100')
      assert.deepEqual(times(upper), [...times(same)].reverse())
      assert.equal((await log('?sort_by=&sort_dir=')).status, 200)
      const bad = await log('?sort_by=email&sort_dir=up', undefined, null)
      assert.deepEqual([bad.status, Object.keys(bad.body.errors).sort()], [422, ['sort_by', 'sort_dir']])
    })
  })

  it('is documented in /openapi.json with its responses', async () => {
    const res = await t.req('GET', '/openapi.json', { key: null })
    assert.equal(res.status, 200)
    for (const path of [
      '/campaigns/{id}/stats',
      '/campaigns/{id}/stats-detail',
      '/campaigns/{id}/log',
      '/campaigns/log',
    ]) {
      const op = res.body.paths[path]?.get
      assert.ok(op, path)
      assert.ok(op.responses['200'] && op.responses['404'] && op.responses['422'], path)
    }
  })
})
