import { describe, it, before } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'

/** Reading purchases back: GET /tracker/transaction and GET /subscribers/{email}/transactions. */
describe('reading transactions', async () => {
  const clock = new ManualClock(new Date('2026-04-01T10:00:00Z'))
  const t = await startTestApp({ clock, worker: false })
  const other = await t.createAccount()

  const buy = async (orderId: string, email: string, when: string, shop = 'a.cz', key?: string) => {
    const res = await t.req('POST', '/tracker/transaction', {
      body: {
        transaction: { order_id: orderId, email, shop, amount: 10, timestamp: when },
        transaction_items: [{ code: `${orderId}-x`, price: 10, amount: 1 }],
      },
      ...(key ? { key } : {}),
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }

  before(async () => {
    await buy('1', 'ann@x.cz', '2026-03-01 08:00:00')
    await buy('2', 'ann@x.cz', '2026-03-05 08:00:00', 'b.cz')
    await buy('3', 'bob@x.cz', '2026-03-05 23:59:59')
    await buy('4', 'ann@x.cz', '2026-03-06 00:00:00')
    await buy('5', 'cid@x.cz', '2026-02-28 23:59:59')
    await buy('9', 'ann@x.cz', '2026-03-10 00:00:00', 'a.cz', other.key)
    // A subscriber who never bought anything.
    const list = (await t.req('POST', '/lists', { body: { name: 'L' } })).body.id
    await t.req('POST', `/lists/${list}/subscribe-bulk`, {
      body: { subscriber_data: [{ email: 'new@x.cz' }] },
    })
  })

  const orders = (body: { transactions: { order_id: string }[] }) => body.transactions.map((x) => x.order_id)

  it('GET /tracker/transaction: newest first with items, filtered by shop, email and days', async () => {
    const all = await t.req('GET', '/tracker/transaction')
    assert.equal(all.status, 200)
    assert.deepEqual(orders(all.body), ['4', '3', '2', '1', '5'])
    assert.deepEqual(
      { ...all.body, transactions: undefined, data: undefined },
      {
        transactions: undefined,
        data: undefined,
        current_page: 1,
        per_page: 100,
        total: 5,
        last_page: 1,
        from: 1,
        to: 5,
      },
    )
    assert.deepEqual(all.body.transactions[0].items[0].code, '4-x')
    assert.deepEqual(orders((await t.req('GET', '/tracker/transaction?shop=b.cz')).body), ['2'])
    assert.deepEqual(orders((await t.req('GET', '/tracker/transaction?email=ANN@x.cz')).body), [
      '4',
      '2',
      '1',
    ])
    const days = await t.req('GET', '/tracker/transaction?date_from=2026-03-01&date_to=2026-03-05')
    assert.deepEqual(orders(days.body), ['3', '2', '1'], 'both days inclusive')
    const times = await t.req(
      'GET',
      `/tracker/transaction?date_from=${encodeURIComponent('2026-03-05 08:00:01')}&date_to=${encodeURIComponent('2026-03-06 00:00:00')}`,
    )
    assert.deepEqual(orders(times.body), ['4', '3'])
    const bad = await t.req('GET', '/tracker/transaction?date_from=March')
    assert.equal(bad.status, 422)
    assert.deepEqual(Object.keys(bad.body.errors), ['date_from'])
  })

  it('GET /tracker/transaction pages up to 500', async () => {
    const p2 = await t.req('GET', '/tracker/transaction?per_page=2&page=2')
    assert.deepEqual(orders(p2.body), ['2', '1'])
    assert.equal(p2.body.current_page, 2)
    assert.equal(p2.body.per_page, 2)
    assert.equal(p2.body.total, 5)
    assert.equal(p2.body.last_page, 3)
    assert.equal((await t.req('GET', '/tracker/transaction?per_page=500')).status, 200)
    const over = await t.req('GET', '/tracker/transaction?per_page=501')
    assert.equal(over.status, 422)
    assert.deepEqual(Object.keys(over.body.errors), ['per_page'])
    // Page 0 (or less) is the first page, as Laravel's paginator reads it; a word is an error.
    const first = await t.req('GET', '/tracker/transaction?page=1&per_page=2')
    const zero = await t.req('GET', '/tracker/transaction?page=0&per_page=2')
    assert.deepEqual([zero.status, zero.body.current_page, orders(zero.body)], [200, 1, orders(first.body)])
    assert.equal((await t.req('GET', '/tracker/transaction?page=x')).status, 422)
  })

  it('GET /tracker/transaction pages as a shop plugin reads it: data[].order_id until to reaches total', async () => {
    const seen: string[] = []
    for (let page = 1; page <= 5; page++) {
      const res = await t.req('GET', `/tracker/transaction?page=${page}&per_page=2&shop=a.cz`)
      assert.equal(res.status, 200)
      const body = res.body as { data: { order_id: string }[]; from: number; to: number; total: number }
      assert.deepEqual(body.data, res.body.transactions)
      seen.push(...body.data.map((x) => x.order_id))
      assert.equal(body.from, page * 2 - 1)
      if (body.to >= body.total) break
    }
    assert.deepEqual(seen, ['4', '3', '1', '5'])
    const past = (await t.req('GET', '/tracker/transaction?page=9&per_page=2')).body
    assert.deepEqual([past.data, past.from, past.to], [[], null, null])
  })

  it("GET /tracker/transaction shows only the account's own", async () => {
    const theirs = await t.req('GET', '/tracker/transaction', { key: other.key })
    assert.deepEqual(orders(theirs.body), ['9'])
    assert.equal((await t.req('GET', '/tracker/transaction', { key: null })).status, 401)
  })

  it('GET /subscribers/{email}/transactions exactly as api.md', async () => {
    const res = await t.req('GET', '/subscribers/ann@x.cz/transactions')
    assert.equal(res.status, 200)
    assert.deepEqual(Object.keys(res.body).sort(), [
      'current_page',
      'last_page',
      'per_page',
      'total',
      'transactions',
    ])
    assert.deepEqual(orders(res.body), ['4', '2', '1'])
    assert.equal(res.body.per_page, 100)
    assert.equal(res.body.total, 3)
    assert.equal(res.body.last_page, 1)
    const tx = res.body.transactions[0]
    assert.deepEqual(Object.keys(tx).sort(), [
      'amount',
      'city',
      'country',
      'county',
      'email',
      'id',
      'items',
      'order_id',
      'props',
      'shipping',
      'shop',
      'status',
      'tax',
      'timestamp',
    ])
    assert.deepEqual(tx.items, [
      { order_id: '4', code: '4-x', title: '', category: '', price: 10, amount: 1, categories: [] },
    ])
    const page = await t.req('GET', '/subscribers/ANN%40x.cz/transactions?per_page=1&page=3')
    assert.deepEqual(orders(page.body), ['1'])
    assert.equal(page.body.last_page, 3)
    assert.equal((await t.req('GET', '/subscribers/ann@x.cz/transactions?per_page=500')).status, 200)
    assert.equal((await t.req('GET', '/subscribers/ann@x.cz/transactions?per_page=501')).status, 422)
  })

  it('GET /subscribers/{email}/transactions: a subscriber without purchases, an unknown address, another account', async () => {
    const none = await t.req('GET', '/subscribers/new@x.cz/transactions')
    assert.equal(none.status, 200)
    assert.deepEqual(none.body, { transactions: [], current_page: 1, per_page: 100, total: 0, last_page: 1 })
    const unknown = await t.req('GET', '/subscribers/nobody@x.cz/transactions')
    assert.equal(unknown.status, 404)
    assert.deepEqual(unknown.body, { message: 'Subscriber not found' })
    const foreign = await t.req('GET', '/subscribers/bob@x.cz/transactions', { key: other.key })
    assert.equal(foreign.status, 404)
    const theirAnn = await t.req('GET', '/subscribers/ann@x.cz/transactions', { key: other.key })
    assert.deepEqual(orders(theirAnn.body), ['9'])
  })
})
