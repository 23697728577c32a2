import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { queryRows } from '../../core/db/sql.js'

const NOW = new Date('2026-04-01T10:00:00Z')

/** A purchase as the node client and the server-side tag send it. */
const order = (orderId: string | number, extra: Record<string, unknown> = {}) => ({
  transaction: {
    order_id: orderId,
    email: 'Buyer@Example.cz ',
    shop: 'eshop.cz',
    amount: 0.1,
    tax: 0.2,
    shipping: 0,
    city: 'Praha',
    county: 'Praha',
    country: 'CZ',
    timestamp: 1774990800, // 2026-03-31 21:00:00
    status: 'completed',
    props: { coupon: 'SPRING' },
    ...extra,
  },
  transaction_items: [
    { code: 'A1', title: 'Shoes', category: 'Shoes', price: 0.1, amount: 1, categories: ['Shoes', 'Men'] },
    { code: 'B2', title: 'Socks', category: null, price: '0.20', amount: '3', tags: ['x'], timestamp: 1 },
  ],
})

describe('tracker transactions', async () => {
  const clock = new ManualClock(NOW)
  const t = await startTestApp({ clock, worker: false })
  const other = await t.createAccount()

  it('POST stores a purchase of a non-subscriber and answers it in the api.md shape', async () => {
    const res = await t.req('POST', '/tracker/transaction', { body: order(1001) })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.headers['content-type'], 'application/json')
    assert.equal(typeof res.body.id, 'number')
    assert.deepEqual(res.body, {
      id: res.body.id,
      order_id: '1001',
      email: 'buyer@example.cz',
      shop: 'eshop.cz',
      amount: 0.1,
      tax: 0.2,
      shipping: 0,
      city: 'Praha',
      county: 'Praha',
      country: 'CZ',
      timestamp: '2026-03-31 21:00:00',
      props: { coupon: 'SPRING' },
      status: 'completed',
      items: [
        {
          order_id: '1001',
          code: 'A1',
          title: 'Shoes',
          category: 'Shoes',
          price: 0.1,
          amount: 1,
          categories: ['Shoes', 'Men'],
        },
        { order_id: '1001', code: 'B2', title: 'Socks', category: '', price: 0.2, amount: 3, categories: [] },
      ],
    })
    // Stored as decimals: summed in SQL they read 0.3, not 0.30000000000000004.
    const [sum] = await queryRows<{ s: string }>(
      t.ctx.db,
      sql`SELECT (amount + tax)::text AS s FROM transactions WHERE id = ${res.body.id}`,
    )
    assert.equal(sum!.s, '0.3')
    const items = await queryRows<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM transaction_items WHERE transaction_id = ${res.body.id}`,
    )
    assert.equal(items[0]!.n, 2)
  })

  it('accepts the timestamp shapes the known clients send, and none means now', async () => {
    const cases: [unknown, string][] = [
      ['2026-02-03 04:05:06', '2026-02-03 04:05:06'],
      [1770091506, '2026-02-03 04:05:06'],
      ['1770091506', '2026-02-03 04:05:06'],
      [1770091506.789, '2026-02-03 04:05:06'],
      [1770091506000, '2026-02-03 04:05:06'],
      ['2026-02-03T05:05:06+01:00', '2026-02-03 04:05:06'],
      ['2026-02-03T04:05:06', '2026-02-03 04:05:06'],
      ['2026-02-03T04:05:06.5+0000', '2026-02-03 04:05:06'],
      [null, '2026-04-01 10:00:00'],
      ['', '2026-04-01 10:00:00'],
    ]
    for (const [i, [timestamp, expected]] of cases.entries()) {
      const res = await t.req('POST', '/tracker/transaction', { body: order(`ts-${i}`, { timestamp }) })
      assert.equal(res.status, 200, `${JSON.stringify(timestamp)}: ${JSON.stringify(res.body)}`)
      assert.equal(res.body.timestamp, expected, JSON.stringify(timestamp))
    }
    // A day that does not exist, and times before 1970 (years 1 and 99 read back as 2001 and 1999): refused.
    for (const timestamp of [
      '2026-02-30T10:00:00Z',
      '0001-01-01T00:00:00Z',
      '0099-06-15T12:00:00Z',
      '1969-12-31',
    ])
      assert.deepEqual(
        Object.keys(
          (await t.req('POST', '/tracker/transaction', { body: order('ts-bad', { timestamp }) })).body.errors,
        ),
        ['transaction.timestamp'],
        timestamp,
      )
    const { transaction } = order('ts-none')
    const { timestamp: _, ...withoutTime } = transaction
    const res = await t.req('POST', '/tracker/transaction', { body: { transaction: withoutTime } })
    assert.equal(res.status, 200)
    assert.equal(res.body.timestamp, '2026-04-01 10:00:00')
    assert.deepEqual(res.body.items, [], 'transaction_items may be left out')
  })

  it('PHP shapes: string amounts, null fields, missing county', async () => {
    const res = await t.req('POST', '/tracker/transaction', {
      body: {
        transaction: {
          order_id: 77,
          email: 'php@example.cz',
          shop: 'https://woo.example/shop/',
          amount: '121.50',
          tax: '21.00',
          shipping: null,
          city: null,
          country: 'SK',
          timestamp: 1770091506,
        },
        transaction_items: [
          { code: 'SKU', title: 'T', category: null, price: 60.75, amount: 2, timestamp: 1 },
        ],
      },
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.amount, 121.5)
    assert.equal(res.body.tax, 21)
    assert.equal(res.body.shipping, 0)
    assert.equal(res.body.city, '')
    assert.equal(res.body.county, null)
    assert.equal(res.body.status, '')
    assert.equal(res.body.props, null)
  })

  it('refuses bad input with 422 naming each field, and a second POST of an order', async () => {
    const bad = await t.req('POST', '/tracker/transaction', {
      body: order('bad', { email: 'not-an-address', amount: 'ten', timestamp: 'yesterday' }),
    })
    assert.equal(bad.status, 422)
    assert.deepEqual(Object.keys(bad.body.errors).sort(), [
      'transaction.amount',
      'transaction.email',
      'transaction.timestamp',
    ])
    // `true` is no time; `false` is PHP's strtotime() of a date it cannot read (Ecomail's WooCommerce plugin sends
    // it as it comes), taken as absent: now, rather than the order lost to a 422.
    const truly = await t.req('POST', '/tracker/transaction', {
      body: order('bool-true', { timestamp: true }),
    })
    assert.equal(truly.status, 422, JSON.stringify(truly.body))
    assert.deepEqual(Object.keys(truly.body.errors), ['transaction.timestamp'])
    const falsy = await t.req('POST', '/tracker/transaction', {
      body: order('bool-false', { timestamp: false }),
    })
    assert.equal(falsy.status, 200, JSON.stringify(falsy.body))
    assert.equal(falsy.body.timestamp, '2026-04-01 10:00:00')
    // The same false cast to an integer, or form-encoded: 0, "0". Not 1970-01-01.
    for (const [i, timestamp] of [0, '0'].entries()) {
      const zero = await t.req('POST', '/tracker/transaction', { body: order(`zero-${i}`, { timestamp }) })
      assert.equal(zero.status, 200, JSON.stringify(zero.body))
      assert.equal(zero.body.timestamp, '2026-04-01 10:00:00')
    }
    const noItemPrice = await t.req('POST', '/tracker/transaction', {
      body: { ...order('bad2'), transaction_items: [{ code: 'x', price: 'free' }] },
    })
    assert.deepEqual(noItemPrice.body, {
      errors: { 'transaction_items.0.price': ['The price must be a number.'] },
    })
    const missing = await t.req('POST', '/tracker/transaction', {
      body: { transaction: { email: 'a@b.cz' } },
    })
    assert.equal(missing.status, 422)
    assert.deepEqual(Object.keys(missing.body.errors), ['transaction.order_id'])
    const noBody = await t.req('POST', '/tracker/transaction', { body: {} })
    assert.equal(noBody.status, 422)
    assert.ok('transaction' in noBody.body.errors)

    assert.equal((await t.req('POST', '/tracker/transaction', { body: order('dup') })).status, 200)
    const again = await t.req('POST', '/tracker/transaction', { body: order('dup', { amount: 5 }) })
    assert.equal(again.status, 422)
    assert.deepEqual(again.body, {
      errors: { 'transaction.order_id': ['The order id has already been taken.'] },
    })
    // One order id per shop: another shop of the account may have the same order id.
    const otherShop = await t.req('POST', '/tracker/transaction', {
      body: order('dup', { shop: 'other.cz' }),
    })
    assert.equal(otherShop.status, 200)
    const rows = await queryRows<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM transactions WHERE account_id = ${t.account.id} AND order_id IN ('bad', 'bad2')`,
    )
    assert.equal(rows[0]!.n, 0, 'nothing was stored for refused input')
  })

  it('PUT overwrites the order and all its items; 404 for a missing or foreign order', async () => {
    const created = await t.req('POST', '/tracker/transaction', { body: order('put-1') })
    const res = await t.req('PUT', '/tracker/transaction/put-1', {
      body: {
        transaction: { email: 'new@example.cz', shop: 'eshop.cz', amount: '10.10', status: 'refunded' },
        transaction_items: [{ code: 'C3', title: 'Hat', price: 10.1, amount: 1 }],
      },
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.id, created.body.id)
    assert.equal(res.body.email, 'new@example.cz')
    assert.equal(res.body.amount, 10.1)
    assert.equal(res.body.tax, 0)
    assert.equal(res.body.status, 'refunded')
    assert.equal(res.body.props, null)
    assert.deepEqual(
      res.body.items.map((i: { code: string }) => i.code),
      ['C3'],
    )
    // Without a shop the order id is looked up in every shop; ambiguous ids need the shop.
    const noShop = await t.req('PUT', '/tracker/transaction/put-1', {
      body: { transaction: { email: 'x@example.cz', amount: 1 } },
    })
    assert.equal(noShop.status, 200)
    assert.equal(noShop.body.shop, 'eshop.cz')
    const ambiguous = await t.req('PUT', '/tracker/transaction/dup', {
      body: { transaction: { email: 'x@example.cz' } },
    })
    assert.equal(ambiguous.status, 422)
    assert.deepEqual(Object.keys(ambiguous.body.errors), ['transaction.shop'])
    const mismatch = await t.req('PUT', '/tracker/transaction/put-1', {
      body: { transaction: { order_id: 'put-2', email: 'x@example.cz' } },
    })
    assert.equal(mismatch.status, 422)

    const missing = await t.req('PUT', '/tracker/transaction/nope', {
      body: { transaction: { email: 'a@b.cz' } },
    })
    assert.equal(missing.status, 404)
    assert.deepEqual(missing.body, { message: 'Transaction not found' })
    const wrongShop = await t.req('PUT', '/tracker/transaction/put-1', {
      body: { transaction: { email: 'a@b.cz', shop: 'elsewhere' } },
    })
    assert.equal(wrongShop.status, 404)
    const foreign = await t.req('PUT', '/tracker/transaction/put-1', {
      key: other.key,
      body: { transaction: { email: 'a@b.cz' } },
    })
    assert.equal(foreign.status, 404)
  })

  it('PUT without a timestamp keeps the purchase time (a status update does not move the order to now)', async () => {
    await t.req('POST', '/tracker/transaction', { body: order('put-time') })
    const statusOnly = await t.req('PUT', '/tracker/transaction/put-time', {
      body: { transaction: { email: 'buyer@example.cz', shop: 'eshop.cz', amount: 0.1, status: 'shipped' } },
    })
    assert.equal(statusOnly.status, 200, JSON.stringify(statusOnly.body))
    assert.equal(statusOnly.body.status, 'shipped')
    assert.equal(statusOnly.body.timestamp, '2026-03-31 21:00:00')
    const blank = await t.req('PUT', '/tracker/transaction/put-time', {
      body: { transaction: { email: 'buyer@example.cz', shop: 'eshop.cz', timestamp: null } },
    })
    assert.equal(blank.body.timestamp, '2026-03-31 21:00:00')
    const moved = await t.req('PUT', '/tracker/transaction/put-time', {
      body: {
        transaction: { email: 'buyer@example.cz', shop: 'eshop.cz', timestamp: '2026-03-30 08:00:00' },
      },
    })
    assert.equal(moved.body.timestamp, '2026-03-30 08:00:00')
    const [row] = await queryRows<{ at: string }>(
      t.ctx.db,
      sql`SELECT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS at FROM transactions
          WHERE order_id = 'put-time'`,
    )
    assert.equal(row!.at, '2026-03-30 08:00:00')
  })

  it('a boolean amount is refused, not read as 1', async () => {
    const res = await t.req('POST', '/tracker/transaction', {
      body: {
        transaction: { order_id: 'bool-amount', email: 'buyer@example.cz', amount: true },
        transaction_items: [{ code: 'A', price: false }],
      },
    })
    assert.equal(res.status, 422, JSON.stringify(res.body))
    assert.deepEqual(Object.keys(res.body.errors).sort(), ['transaction.amount', 'transaction_items.0.price'])
    const stored = await queryRows(t.ctx.db, sql`SELECT 1 FROM transactions WHERE order_id = 'bool-amount'`)
    assert.equal(stored.length, 0)
  })

  it('an item quantity sent as null counts as 1, as a blank or absent one does', async () => {
    const res = await t.req('POST', '/tracker/transaction', {
      body: {
        transaction: { order_id: 'qty-null', email: 'buyer@example.cz' },
        transaction_items: [
          { code: 'N', amount: null, price: null },
          { code: 'B', amount: '' },
          { code: 'A' },
        ],
      },
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(
      res.body.items.map((i: { code: string; amount: number; price: number }) => [i.code, i.amount, i.price]),
      [
        ['N', 1, 0],
        ['B', 1, 0],
        ['A', 1, 0],
      ],
    )
  })

  it("items as an object of index keys (PHP's list with gaps) are read in key order, on POST, PUT and bulk", async () => {
    const items = {
      '10': { code: 'C', price: 3 },
      '0': { code: 'A', price: 1 },
      '2': { code: 'B', price: 2 },
    }
    const codes = (body: { items: { code: string }[] }) => body.items.map((i) => i.code)
    const post = await t.req('POST', '/tracker/transaction', {
      body: { transaction: order('gap-1').transaction, transaction_items: items },
    })
    assert.equal(post.status, 200, post.text)
    assert.deepEqual(codes(post.body), ['A', 'B', 'C'])
    const put = await t.req('PUT', '/tracker/transaction/gap-1', {
      body: { transaction: { email: 'b@x.cz', amount: 1 }, transaction_items: { '1': { code: 'D' } } },
    })
    assert.deepEqual(codes(put.body), ['D'])
    const bulk = await t.req('POST', '/tracker/transaction-bulk', {
      body: { transaction_data: [{ transaction: order('gap-2').transaction, transaction_items: items }] },
    })
    assert.deepEqual(bulk.body, { inserts: 1 })
    const read = await t.req('GET', '/tracker/transaction?email=buyer@example.cz')
    const stored = read.body.data.find((x: { order_id: string }) => x.order_id === 'gap-2')
    assert.deepEqual(codes(stored), ['A', 'B', 'C'])
    const bad = await t.req('POST', '/tracker/transaction', {
      body: { transaction: order('gap-3').transaction, transaction_items: { a: { code: 'X' } } },
    })
    assert.equal(bad.status, 422)
    assert.deepEqual(Object.keys(bad.body.errors), ['transaction_items'])
  })

  it('DELETE one order, with the optional shop match', async () => {
    await t.req('POST', '/tracker/transaction', { body: order('del-1') })
    await t.req('POST', '/tracker/transaction', { body: order('del-1', { shop: 'b.cz' }) })
    await t.req('POST', '/tracker/transaction', { body: order('del-2') })
    await t.req('POST', '/tracker/transaction', { body: order('del-3') })
    await t.req('POST', '/tracker/transaction', { body: order('del-3', { shop: 'b.cz' }) })
    await t.req('POST', '/tracker/transaction', { body: order('del-4') })
    await t.req('POST', '/tracker/transaction', { body: order('del-5', { shop: 'b.cz' }) })
    const foreign = await t.req('DELETE', '/tracker/transaction/del-2/delete', { key: other.key })
    assert.deepEqual(foreign.body, { deleted: false })
    const wrongShop = await t.req('DELETE', '/tracker/transaction/del-1/delete', {
      body: { transaction_data: { shop: 'c.cz' } },
    })
    assert.equal(wrongShop.status, 200)
    assert.deepEqual(wrongShop.body, { deleted: false })
    const oneShop = await t.req('DELETE', '/tracker/transaction/del-1/delete', {
      body: { transaction_data: { shop: 'b.cz' } },
    })
    assert.deepEqual(oneShop.body, { deleted: true })
    const left = await queryRows<{ shop: string }>(
      t.ctx.db,
      sql`SELECT shop FROM transactions WHERE account_id = ${t.account.id} AND order_id = 'del-1'`,
    )
    assert.deepEqual(left, [{ shop: 'eshop.cz' }])
    // No body at all (the PHP client's version 1.1 sends none): the order id in every shop.
    assert.deepEqual((await t.req('DELETE', '/tracker/transaction/del-2/delete')).body, { deleted: true })
    assert.deepEqual((await t.req('DELETE', '/tracker/transaction/del-2/delete')).body, { deleted: false })
    // `[]`, PHP's empty map, as the body (later PHP clients send json_encode of an empty array with every
    // DELETE) or as transaction_data: no shop named, the order id in every shop.
    const phpEmpty = await t.req('DELETE', '/tracker/transaction/del-3/delete', { body: [] })
    assert.equal(phpEmpty.status, 200, phpEmpty.text)
    assert.deepEqual(phpEmpty.body, { deleted: true })
    const phpEmptyData = await t.req('DELETE', '/tracker/transaction/del-4/delete', {
      body: { transaction_data: [] },
    })
    assert.deepEqual(phpEmptyData.body, { deleted: true })
    // A null shop names none either (it was read as '', the shop of orders sent without one).
    const nullShop = await t.req('DELETE', '/tracker/transaction/del-5/delete', {
      body: { transaction_data: { shop: null } },
    })
    assert.deepEqual(nullShop.body, { deleted: true })
    const rest = await queryRows<{ order_id: string }>(
      t.ctx.db,
      sql`SELECT order_id FROM transactions
          WHERE account_id = ${t.account.id} AND order_id IN ('del-3', 'del-4', 'del-5')`,
    )
    assert.deepEqual(rest, [])
    const notAMap = await t.req('DELETE', '/tracker/transaction/del-1/delete', { body: ['b.cz'] })
    assert.equal(notAMap.status, 422)
    const items = await queryRows<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM transaction_items ti
          WHERE NOT EXISTS (SELECT 1 FROM transactions t WHERE t.id = ti.transaction_id)`,
    )
    assert.equal(items[0]!.n, 0, 'items go with their order')
  })

  it('needs the key', async () => {
    const res = await t.req('POST', '/tracker/transaction', { body: order('k'), key: null })
    assert.equal(res.status, 401)
  })
})
