import { describe, it, before } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { createListeningPipeline } from '../../../test/helpers/listening-pipeline.js'
import { ManualClock } from '../../core/clock.js'
import { queryRows } from '../../core/db/sql.js'

describe('tracker events', async () => {
  const clock = new ManualClock(new Date('2026-04-01T10:00:00Z'))
  const t = await startTestApp({ clock, worker: false })
  const other = await t.createAccount()
  // Events become signals only while an automation listens for them: any event, whatever it listens for.
  await createListeningPipeline(t, { type: 'event', category: 'ue' })

  before(async () => {
    const list = (await t.req('POST', '/lists', { body: { name: 'L' } })).body.id
    await t.req('POST', `/lists/${list}/subscribe-bulk`, {
      body: { subscriber_data: [{ email: 'eve@x.cz' }, { email: 'gone@x.cz', status: 2 }] },
    })
  })
  const track = (event: Record<string, unknown>, key?: string) =>
    t.req('POST', '/tracker/events', { body: { event }, ...(key ? { key } : {}) })
  const stored = () =>
    queryRows<{ category: string; action: string; value: string }>(
      t.ctx.db,
      sql`SELECT category, action, value FROM tracker_events WHERE account_id = ${t.account.id} ORDER BY id`,
    )

  it('stores the event and answers it with value JSON-encoded', async () => {
    const value = JSON.stringify({ data: { action: 'Basket', products: [{ productId: 1, price: 9.9 }] } })
    const res = await track({
      email: ' EVE@x.cz',
      category: 'ue',
      action: 'Basket',
      label: 'Basket',
      property: 'cart',
      value,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body, {
      id: res.body.id,
      email: 'eve@x.cz',
      category: 'ue',
      action: 'Basket',
      label: 'Basket',
      property: 'cart',
      value: JSON.stringify(value),
      created_at: '2026-04-01 10:00:00',
    })
    const obj = await track({
      email: 'eve@x.cz',
      category: 'Product',
      action: 'AddToCart',
      value: { qty: 2 },
    })
    assert.equal(obj.body.value, '{"qty":2}')
    const none = await track({ email: 'eve@x.cz', category: 'page', action: 'view' })
    assert.equal(none.body.value, 'null')
    assert.deepEqual(
      (await stored()).map((e) => [e.category, e.action]),
      [
        ['ue', 'Basket'],
        ['Product', 'AddToCart'],
        ['page', 'view'],
      ],
    )
    // An unsubscribed member is still a subscriber of the account.
    assert.equal((await track({ email: 'gone@x.cz', category: 'page' })).status, 200)
  })

  it('emits each event as a signal in the same transaction', async () => {
    const rows = await queryRows<{ kind: string; email: string; payload: { category: string } }>(
      t.ctx.db,
      sql`SELECT kind, email, payload FROM signals WHERE account_id = ${t.account.id} ORDER BY id`,
    )
    assert.deepEqual(
      rows.map((r) => [r.kind, r.email, r.payload.category]),
      [
        ['event', 'eve@x.cz', 'ue'],
        ['event', 'eve@x.cz', 'Product'],
        ['event', 'eve@x.cz', 'page'],
        ['event', 'gone@x.cz', 'page'],
      ],
    )
  })

  it('404 {errors:[..]} for an address in no list of the account, including another account', async () => {
    const before = (await stored()).length
    const res = await track({ email: 'stranger@x.cz', category: 'page' })
    assert.equal(res.status, 404)
    assert.deepEqual(res.body, { errors: ['Subscriber not found in this account'] })
    const foreign = await track({ email: 'eve@x.cz', category: 'page' }, other.key)
    assert.equal(foreign.status, 404)
    assert.ok(Array.isArray(foreign.body.errors))
    assert.equal((await stored()).length, before)
  })

  it('refuses a value over 20,000 characters and a bad address with 422', async () => {
    const ok = await track({ email: 'eve@x.cz', category: 'big', value: 'x'.repeat(20_000) })
    assert.equal(ok.status, 200)
    const long = await track({ email: 'eve@x.cz', category: 'big', value: 'x'.repeat(20_001) })
    assert.equal(long.status, 422)
    assert.deepEqual(long.body, {
      errors: { 'event.value': ['The value must not be greater than 20000 characters.'] },
    })
    // Characters, not UTF-16 units: 20,000 emoji are 40,000 units.
    const emoji = await track({ email: 'eve@x.cz', category: 'big', value: '😀'.repeat(20_000) })
    assert.equal(emoji.status, 200)
    assert.equal(
      (await track({ email: 'eve@x.cz', category: 'big', value: '😀'.repeat(20_001) })).status,
      422,
    )
    const bigObject = await track({ email: 'eve@x.cz', category: 'big', value: { a: 'x'.repeat(20_000) } })
    assert.equal(bigObject.status, 422)
    const bad = await track({ email: 'not-an-address', category: 'x' })
    assert.equal(bad.status, 422)
    assert.deepEqual(Object.keys(bad.body.errors), ['event.email'])
    const missing = await t.req('POST', '/tracker/events', { body: { event: { category: 'x' } } })
    assert.equal(missing.status, 422)
    assert.deepEqual(Object.keys(missing.body.errors), ['event.email'])
    assert.equal((await t.req('POST', '/tracker/events', { body: {} })).status, 422)
    assert.equal((await track({ email: 'eve@x.cz' }, 'wrong-key')).status, 401)
  })

  it("answers a subscriber's events newest first, paged and filtered; 404 for an address not the account's", async () => {
    const list = (await t.req('POST', '/lists', { body: { name: 'Events' } })).body.id
    await t.req('POST', `/lists/${list}/subscribe`, { body: { subscriber_data: { email: 'ann@x.cz' } } })
    for (const [n, action] of ['View', 'Basket', 'View'].entries()) {
      clock.advance(1000)
      assert.equal((await track({ email: 'ann@x.cz', category: 'ue', action, value: { n } })).status, 200)
    }
    const page = (query = '', key?: string) =>
      t.req('GET', `/subscribers/ANN%40x.cz/events${query}`, key ? { key } : {})
    const all = await page()
    assert.equal(all.status, 200)
    const { data, ...paging } = all.body
    assert.deepEqual(paging, { current_page: 1, per_page: 20, total: 3, last_page: 1 })
    assert.deepEqual(
      data.map((e: Record<string, string>) => [e.email, e.action, e.value, e.timestamp === e.created_at]),
      [
        ['ann@x.cz', 'View', '{"n":2}', true],
        ['ann@x.cz', 'Basket', '{"n":1}', true],
        ['ann@x.cz', 'View', '{"n":0}', true],
      ],
    )
    assert.match(data[0].timestamp, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    const second = await page('?per_page=2&page=2')
    assert.deepEqual(
      [second.body.last_page, second.body.data.map((e: Record<string, string>) => e.value)],
      [2, ['{"n":0}']],
    )
    assert.equal((await page('?category=ue&action=View')).body.total, 2)
    assert.equal((await page('?action=Nothing')).body.total, 0)
    assert.equal((await page('?category=ue')).body.total, 3)
    assert.equal((await page('?category=other')).body.total, 0)
    assert.equal((await page('', 'wrong-key')).status, 401)
    assert.equal((await t.req('GET', '/subscribers/nobody%40x.cz/events')).status, 404)
    assert.equal((await page('', other.key)).status, 404)
    assert.equal((await page('?per_page=101')).status, 422)
  })
})
