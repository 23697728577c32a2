import { before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp, type TestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import type { MessageRow } from '../messages/index.js'
import { insertPipeline } from '../pipelines/index.js'
import { pipelines } from '../pipelines/index.js'
import { eq } from 'drizzle-orm'
import {
  at,
  countedEvent,
  insertMail,
  insertPurchase,
  insertRun,
  type MailSeed,
} from './automation-stats.test-helpers.js'

const NOW = at('2026-03-20T10:00:00.000Z')

async function newPipeline(t: TestApp, accountId: number, name: string): Promise<number> {
  const row = await insertPipeline(t.ctx.db, {
    accountId,
    name,
    listId: 1,
    trigger: { type: 'api' },
    start: 'm1',
    actions: [
      { id: 'm1', type: 'mail', properties: { name: 'First', template: 1 }, next: ['m2'] },
      { id: 'm2', type: 'mail', properties: { name: 'Second', template: 1 }, next: [] },
    ],
  })
  return row.id
}

/**
 * The pipeline of these tests, every figure worked out by hand:
 *  mail (m1 on 03-10 08:00, m2 on 03-12 08:00): A m1→a, B m1→b, C m1→c, E m1→d, H m1→f refused (status 2),
 *    G m1→e skipped (status 3), D m2→a, F m2→b, I m2→c                  → inject 7 (A B C D E F I)
 *  opens  A 03-10 12:00 and 03-11 09:00, B 03-11 12:00, D 03-12 10:00, C 03-13 00:00 → open 4, total_open 5
 *  clicks A 03-11 09:05 and 03-11 10:00, D 03-12 10:05                  → click 2, total_click 3
 *  C unsub 03-13 00:05, spam twice 03-13 00:10; E hard twice 03-10 09:00; F soft 03-12 09:00
 *    → unsub 1, spam 1, hard 1, soft 1, bounce 2; send = 7 − 2 = 5, not_opened 1
 *  purchases of a: 03-11 09:00 (before any click) 7, 03-12 12:00 100.1, 03-18 09:05 (A's window end) 50.2,
 *    03-19 10:05 (D's window end) 20, 03-19 10:05:01 999; b (never clicked here) 25.3; a in another account
 *    1000                                                                → conversions 3, value 170.3
 *  runs: ended, ended, active, stopped, active                          → triggered 5, ended 2
 * Noise that must not count: pipeline Q of the same account (a run, a clicked mail to b with its counters),
 * and the other account.
 */
describe('GET /pipelines/{id}/stats and stats-detail', async () => {
  const clock = new ManualClock(NOW)
  const t = await startTestApp({ clock, worker: false })
  const other = await t.createAccount()
  let P = 0
  let Q = 0
  let theirs = 0
  let deleted = 0

  before(async () => {
    P = await newPipeline(t, t.account.id, 'Welcome')
    Q = await newPipeline(t, t.account.id, 'Other')
    theirs = await newPipeline(t, other.id, 'Theirs')
    deleted = await newPipeline(t, t.account.id, 'Gone')
    await t.ctx.db.update(pipelines).set({ deletedAt: NOW }).where(eq(pipelines.id, deleted))

    const acc = t.account.id
    const mail = (actionId: string, email: string, when: string, extra: Partial<MailSeed> = {}) =>
      insertMail(t, { accountId: acc, pipelineId: P, actionId, email, createdAt: at(when), ...extra })
    const m1 = '2026-03-10T08:00:00.000Z'
    const m2 = '2026-03-12T08:00:00.000Z'
    const A = await mail('m1', 'a@x.cz', m1, {
      firstOpenAt: at('2026-03-10T12:00:00.000Z'),
      firstClickAt: at('2026-03-11T09:05:00.000Z'),
    })
    const B = await mail('m1', 'b@x.cz', m1)
    const C = await mail('m1', 'c@x.cz', m1)
    const E = await mail('m1', 'd@x.cz', m1)
    await mail('m1', 'f@x.cz', m1, { status: 2 })
    await mail('m1', 'e@x.cz', m1, { status: 3 })
    const D = await mail('m2', 'a@x.cz', m2, { firstClickAt: at('2026-03-12T10:05:00.000Z') })
    const F = await mail('m2', 'b@x.cz', m2)
    await mail('m2', 'c@x.cz', m2)

    const ev = (m: MessageRow, e: Parameters<typeof countedEvent>[2], when: string, unique = true) =>
      countedEvent(t, m, e, at(when), unique)
    await ev(A, 'open', '2026-03-10T12:00:00.000Z')
    await ev(A, 'open', '2026-03-11T09:00:00.000Z', false)
    await ev(A, 'click', '2026-03-11T09:05:00.000Z')
    await ev(A, 'click', '2026-03-11T10:00:00.000Z', false)
    await ev(B, 'open', '2026-03-11T12:00:00.000Z')
    await ev(D, 'open', '2026-03-12T10:00:00.000Z')
    await ev(D, 'click', '2026-03-12T10:05:00.000Z')
    await ev(C, 'open', '2026-03-13T00:00:00.000Z')
    await ev(C, 'unsub', '2026-03-13T00:05:00.000Z')
    await ev(C, 'spam', '2026-03-13T00:10:00.000Z')
    await ev(C, 'spam', '2026-03-13T00:10:00.000Z', false)
    await ev(E, 'hard_bounce', '2026-03-10T09:00:00.000Z')
    await ev(E, 'hard_bounce', '2026-03-10T09:00:00.000Z', false)
    await ev(F, 'soft_bounce', '2026-03-12T09:00:00.000Z')

    const buy = (order: string, email: string, amount: number, when: string, account = acc) =>
      insertPurchase(t, account, order, email, amount, at(when))
    await buy('o1', 'a@x.cz', 7, '2026-03-11T09:00:00.000Z')
    await buy('o2', 'a@x.cz', 100.1, '2026-03-12T12:00:00.000Z')
    await buy('o3', 'a@x.cz', 50.2, '2026-03-18T09:05:00.000Z')
    await buy('o4', 'a@x.cz', 20, '2026-03-19T10:05:00.000Z')
    await buy('o5', 'a@x.cz', 999, '2026-03-19T10:05:01.000Z')
    await buy('o6', 'b@x.cz', 25.3, '2026-03-12T11:00:00.000Z')
    await buy('o7', 'a@x.cz', 1000, '2026-03-12T12:00:00.000Z', other.id)

    const run = (status: 'active' | 'ended' | 'stopped', pipelineId = P) =>
      insertRun(t, { accountId: acc, pipelineId, email: 'a@x.cz', status, startedAt: at(m1) })
    for (const s of ['ended', 'ended', 'active', 'stopped', 'active'] as const) await run(s)

    // Pipeline Q: a run, and b's clicked mail (with b's purchase inside its window).
    await run('ended', Q)
    const q = await insertMail(t, {
      accountId: acc,
      pipelineId: Q,
      actionId: 'm1',
      email: 'b@x.cz',
      createdAt: at(m1),
      firstClickAt: at('2026-03-12T10:00:00.000Z'),
    })
    await countedEvent(t, q, 'open', at('2026-03-11T10:00:00.000Z'), true)
    await countedEvent(t, q, 'click', at('2026-03-12T10:00:00.000Z'), true)
  })

  const stats = (id: number, query = '', key?: string) =>
    t.req('GET', `/pipelines/${id}/stats${query}`, key ? { key } : {})
  const detail = (query = '', id = P) => t.req('GET', `/pipelines/${id}/stats-detail${query}`)

  it('answers every field of api.md with hand-computed values', async () => {
    const res = await stats(P)
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.deepEqual(res.body, {
      stats: {
        triggered: 5,
        ended: 2,
        inject: 7,
        send: 5,
        delivery_rate: 71.43,
        open: 4,
        total_open: 5,
        not_opened: 1,
        open_rate: 80,
        click: 2,
        total_click: 3,
        click_rate: 40,
        soft_bounce: 1,
        hard_bounce: 1,
        bounce: 2,
        bounce_rate: 28.57,
        spam: 1,
        unsub: 1,
        conversions: 3,
        conversions_value: 170.3,
      },
    })
  })

  it('adds the in-range fields with a date range (from inclusive, to day inclusive)', async () => {
    const both = await stats(P, '?from_date=2026-03-11&to_date=2026-03-12')
    assert.equal(both.status, 200)
    assert.deepEqual(
      [both.body.stats.open_in_range, both.body.stats.click_in_range, both.body.stats.inject_in_range],
      [3, 2, 3],
    )
    assert.equal(both.body.stats.open, 4, 'the other fields stay whole')
    const from = (await stats(P, '?from_date=2026-03-12')).body.stats
    assert.deepEqual([from.open_in_range, from.click_in_range, from.inject_in_range], [2, 1, 3])
    const to = (await stats(P, '?to_date=2026-03-10')).body.stats
    assert.deepEqual([to.open_in_range, to.click_in_range, to.inject_in_range], [1, 0, 4])
  })

  it('rejects a bad range with 422 naming the field', async () => {
    const old = await stats(P, '?from_date=2025-03-19')
    assert.equal(old.status, 422)
    assert.deepEqual(Object.keys(old.body.errors), ['from_date'])
    assert.equal((await stats(P, '?from_date=2025-03-20')).status, 200, 'exactly one year back is fine')
    const order = await stats(P, '?from_date=2026-03-12&to_date=2026-03-12')
    assert.equal(order.status, 422)
    assert.deepEqual(Object.keys(order.body.errors), ['to_date'])
    assert.equal((await stats(P, '?to_date=2026-13-01')).status, 422)
  })

  it('answers 404 for an unknown, deleted or foreign pipeline, and zeros for a quiet one', async () => {
    for (const id of [999999, deleted, theirs]) {
      const res = await stats(id)
      assert.equal(res.status, 404)
      assert.deepEqual(Object.keys(res.body), ['message'])
      assert.equal((await detail('', id)).status, 404)
    }
    const q = (await stats(Q)).body.stats
    assert.deepEqual([q.triggered, q.ended, q.inject, q.open, q.click], [1, 1, 1, 1, 1])
    assert.deepEqual([q.conversions, q.conversions_value], [1, 25.3])
    const empty = (await stats(theirs, '', other.key)).body.stats
    assert.equal(empty.triggered, 0)
    assert.equal(empty.open_rate, 0)
  })

  it('stats-detail: event counts per recipient address over all its mail, in first-mail order', async () => {
    const res = await detail()
    assert.equal(res.status, 200)
    const zero = {
      open: 0,
      send: 0,
      click: 0,
      unsub: 0,
      hard_bounce: 0,
      soft_bounce: 0,
      out_of_band: 0,
      spam: 0,
    }
    assert.deepEqual(res.body, {
      total: 5,
      per_page: 100,
      next_page_url: null,
      subscribers: {
        'a@x.cz': { ...zero, send: 2, open: 3, click: 3 },
        'b@x.cz': { ...zero, send: 2, open: 1, soft_bounce: 1 },
        'c@x.cz': { ...zero, send: 2, open: 1, unsub: 1, spam: 2 },
        'd@x.cz': { ...zero, send: 1, hard_bounce: 2 },
        'f@x.cz': zero,
      },
    })
    assert.deepEqual(Object.keys(res.body.subscribers), ['a@x.cz', 'b@x.cz', 'c@x.cz', 'd@x.cz', 'f@x.cz'])
  })

  it('stats-detail pages and filters as the campaign one', async () => {
    const first = await detail('?per_page=2')
    assert.deepEqual(Object.keys(first.body.subscribers), ['a@x.cz', 'b@x.cz'])
    assert.equal(first.body.total, 5)
    assert.equal(
      first.body.next_page_url,
      `http://127.0.0.1:3000/pipelines/${P}/stats-detail?page=2&per_page=2`,
    )
    const last = await detail('?per_page=2&page=3')
    assert.deepEqual(Object.keys(last.body.subscribers), ['f@x.cz'])
    assert.equal(last.body.next_page_url, null)
    const clicked = await detail('?event=click')
    assert.equal(clicked.body.total, 1)
    assert.deepEqual(Object.keys(clicked.body.subscribers), ['a@x.cz'])
    assert.deepEqual(Object.keys((await detail('?event=spam')).body.subscribers), ['c@x.cz'])
    const one = await detail('?email=%20B@X.cz')
    assert.deepEqual(Object.keys(one.body.subscribers), ['b@x.cz'])
    const since = await detail('?from_date=2026-03-12')
    assert.deepEqual(since.body.subscribers['a@x.cz'], {
      open: 1,
      send: 1,
      click: 1,
      unsub: 0,
      hard_bounce: 0,
      soft_bounce: 0,
      out_of_band: 0,
      spam: 0,
    })
    assert.equal((await detail('?per_page=5001')).status, 422)
    assert.equal((await detail('?event=bogus')).status, 422)
    assert.equal((await detail('?from_date=2020-01-01')).status, 422)
  })

  it('stats-detail by POST {emails}: the given recipients only, as PHP clients ask for them', async () => {
    const post = (body: unknown, query = '', id = P, key?: string) =>
      t.req('POST', `/pipelines/${id}/stats-detail${query}`, { body, ...(key ? { key } : {}) })
    const res = await post({ emails: ['C@x.cz', 'a@x.cz', 'nobody@x.cz', 'a@x.cz'] })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.total, 2)
    assert.deepEqual(Object.keys(res.body.subscribers), ['a@x.cz', 'c@x.cz'])
    assert.deepEqual(res.body.subscribers['a@x.cz'], (await detail()).body.subscribers['a@x.cz'])
    const paged = await post({ emails: ['a@x.cz', 'b@x.cz', 'c@x.cz'] }, '?per_page=2&event=open')
    assert.deepEqual([paged.body.total, Object.keys(paged.body.subscribers)], [3, ['a@x.cz', 'b@x.cz']])
    assert.deepEqual((await post({ emails: [] })).body.subscribers, {})
    assert.equal((await post({})).status, 422)
    assert.equal((await post({ emails: ['a@x.cz'] }, '', theirs)).status, 404)
  })
})
