import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { queryRows } from '../../core/db/sql.js'

const entry = (orderId: string, amount: unknown, items = 1, shop = 'a.cz') => ({
  transaction: {
    order_id: orderId,
    email: `${orderId}@x.cz`,
    shop,
    amount,
    timestamp: '2026-03-01 10:00:00',
  },
  transaction_items: Array.from({ length: items }, (_, i) => ({ code: `c${i}`, price: 0.1, amount: i + 1 })),
})

describe('bulk transactions', async () => {
  const t = await startTestApp({ worker: false })
  const other = await t.createAccount()
  const count = async (table: string, accountId = t.account.id) =>
    (
      await queryRows<{ n: number }>(
        t.ctx.db,
        sql`SELECT count(*)::int AS n FROM ${sql.identifier(table)} WHERE account_id = ${accountId}`,
      )
    )[0]!.n

  it('imports up to 1000 purchases with their items, overwriting known orders', async () => {
    const data = Array.from({ length: 1000 }, (_, i) => entry(`o${i}`, i % 2 ? '0.1' : 0.2, i % 3))
    const res = await t.req('POST', '/tracker/transaction-bulk', { body: { transaction_data: data } })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body, { inserts: 1000 })
    assert.equal(await count('transactions'), 1000)
    assert.equal(await count('transaction_items'), 999)
    const [sum] = await queryRows<{ s: string }>(
      t.ctx.db,
      sql`SELECT sum(amount)::text AS s FROM transactions WHERE account_id = ${t.account.id}`,
    )
    assert.equal(sum!.s, '150.0', '500 × 0.1 + 500 × 0.2, exactly')

    // Again, with new amounts and items for two known orders, one new one, and an order sent twice.
    const again = await t.req('POST', '/tracker/transaction-bulk', {
      body: {
        transaction_data: [entry('o1', 5, 4), entry('o2', 6, 0), entry('new', 7, 1), entry('new', 8, 2)],
      },
    })
    assert.deepEqual(again.body, { inserts: 3 })
    const rows = await queryRows<{ order_id: string; amount: string; items: number }>(
      t.ctx.db,
      sql`SELECT t.order_id, t.amount::text AS amount,
                 (SELECT count(*)::int FROM transaction_items i WHERE i.transaction_id = t.id) AS items
          FROM transactions t WHERE account_id = ${t.account.id} AND order_id IN ('o1', 'o2', 'new')
          ORDER BY order_id`,
    )
    assert.deepEqual(rows, [
      { order_id: 'new', amount: '8', items: 2 },
      { order_id: 'o1', amount: '5', items: 4 },
      { order_id: 'o2', amount: '6', items: 0 },
    ])
    const read = await t.req('GET', '/subscribers/o1@x.cz/transactions')
    assert.deepEqual(
      read.body.transactions[0].items.map((i: { code: string; amount: number }) => [i.code, i.amount]),
      [
        ['c0', 1],
        ['c1', 2],
        ['c2', 3],
        ['c3', 4],
      ],
    )
    assert.equal(await count('transactions', other.id), 0)
    assert.equal(await count('signals'), 0, 'a bulk import starts no automation')
  })

  it('an overwrite without a timestamp keeps the stored purchase time', async () => {
    const first = await t.req('POST', '/tracker/transaction-bulk', {
      body: { transaction_data: [entry('keep-time', 1), entry('new-time', 1)] },
    })
    assert.equal(first.status, 200, JSON.stringify(first.body))
    const again = (orderId: string, timestamp?: unknown) => ({
      transaction: { order_id: orderId, email: `${orderId}@x.cz`, shop: 'a.cz', amount: 2, timestamp },
    })
    const res = await t.req('POST', '/tracker/transaction-bulk', {
      body: { transaction_data: [again('keep-time', null), again('new-time', '2026-03-05 08:00:00')] },
    })
    assert.deepEqual(res.body, { inserts: 2 })
    const rows = await queryRows<{ order_id: string; amount: string; at: string }>(
      t.ctx.db,
      sql`SELECT order_id, amount::text AS amount,
                 to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS at
          FROM transactions WHERE order_id IN ('keep-time', 'new-time') ORDER BY order_id`,
    )
    assert.deepEqual(
      rows.map((r) => [r.order_id, r.amount, r.at]),
      [
        ['keep-time', '2', '2026-03-01 10:00:00'],
        ['new-time', '2', '2026-03-05 08:00:00'],
      ],
    )
  })

  it('skips an entry whose transaction is null (an order a shop plugin could not read)', async () => {
    const res = await t.req('POST', '/tracker/transaction-bulk', {
      body: {
        transaction_data: [
          entry('n1', '10.50'),
          { transaction: null, transaction_items: [{ code: 'x', price: 1, amount: '1', timestamp: 1 }] },
          entry('n2', 3),
        ],
      },
    })
    assert.deepEqual([res.status, res.body], [200, { inserts: 2 }], res.text)
    const read = await t.req('GET', '/tracker/transaction?shop=a.cz&per_page=500')
    const orders = read.body.transactions.map((p: { order_id: string }) => p.order_id)
    assert.ok(orders.includes('n1') && orders.includes('n2'), orders.join())
    const bad = await t.req('POST', '/tracker/transaction-bulk', {
      body: {
        transaction_data: [{ transaction: null }, { transaction: { order_id: '', email: 'n3@x.cz' } }],
      },
    })
    assert.equal(bad.status, 422)
    assert.deepEqual(Object.keys(bad.body.errors), ['transaction_data.1.transaction.order_id'])
  })

  it('refuses more than 1000, or any invalid entry, writing nothing', async () => {
    const before = await count('transactions')
    const over = Array.from({ length: 1001 }, (_, i) => entry(`x${i}`, 1))
    const res = await t.req('POST', '/tracker/transaction-bulk', { body: { transaction_data: over } })
    assert.equal(res.status, 422)
    assert.deepEqual(res.body, {
      errors: { transaction_data: ['The transaction_data must not have more than 1000 items.'] },
    })
    const bad = await t.req('POST', '/tracker/transaction-bulk', {
      body: {
        transaction_data: [
          entry('y1', 1),
          entry('y2', 'lots'),
          { transaction: { order_id: 'y3', email: 'nope' } },
        ],
      },
    })
    assert.equal(bad.status, 422)
    assert.deepEqual(bad.body, {
      errors: {
        'transaction_data.1.transaction.amount': ['The amount must be a number.'],
        'transaction_data.2.transaction.email': ['The email must be a valid email address.'],
      },
    })
    const noEmail = await t.req('POST', '/tracker/transaction-bulk', {
      body: { transaction_data: [entry('y1', 1), { transaction: { order_id: 'y3' } }] },
    })
    assert.deepEqual(noEmail.body, {
      errors: { 'transaction_data.1.transaction.email': ['The email field is required.'] },
    })
    const noData = await t.req('POST', '/tracker/transaction-bulk', { body: {} })
    assert.equal(noData.status, 422)
    assert.deepEqual(Object.keys(noData.body.errors), ['transaction_data'])
    assert.equal(await count('transactions'), before)
    assert.deepEqual(
      (await t.req('POST', '/tracker/transaction-bulk', { body: { transaction_data: [] } })).body,
      {
        inserts: 0,
      },
    )
    assert.equal((await t.req('POST', '/tracker/transaction-bulk', { key: null, body: {} })).status, 401)
  })

  it('delete-bulk deletes by order id and optional shop, only in the own account', async () => {
    await t.req('POST', '/tracker/transaction-bulk', {
      body: {
        transaction_data: [
          entry('d1', 1),
          entry('d1', 1, 1, 'b.cz'),
          entry('d2', 1),
          entry('d3', 1),
          entry('d4', 1),
        ],
      },
    })
    await t.req('POST', '/tracker/transaction-bulk', {
      key: other.key,
      body: { transaction_data: [entry('d3', 1)] },
    })
    const res = await t.req('DELETE', '/tracker/transaction/delete-bulk', {
      body: {
        transaction_data: [
          { order_id: 'd1', shop: 'b.cz' },
          { order_id: 'd2' },
          { order_id: 'd3', shop: 'a.cz' },
          { order_id: 'd3' },
          // null names no shop, as absent does (Ajv's coercion made it '', the shop of orders sent without one)
          { order_id: 'd4', shop: null },
          { order_id: 'missing' },
        ],
      },
    })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { deleted: 4 })
    const left = await queryRows<{ order_id: string; shop: string }>(
      t.ctx.db,
      sql`SELECT order_id, shop FROM transactions WHERE account_id = ${t.account.id} AND order_id LIKE 'd%'`,
    )
    assert.deepEqual(left, [{ order_id: 'd1', shop: 'a.cz' }])
    assert.equal(await count('transactions', other.id), 1, "the other account's d3 stays")
    const over = await t.req('DELETE', '/tracker/transaction/delete-bulk', {
      body: { transaction_data: Array.from({ length: 1001 }, (_, i) => ({ order_id: `d${i}` })) },
    })
    assert.equal(over.status, 422)
    assert.deepEqual(Object.keys(over.body.errors), ['transaction_data'])
    const missing = await t.req('DELETE', '/tracker/transaction/delete-bulk', { body: {} })
    assert.equal(missing.status, 422)
  })
})
