import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { needsSecondConnection, withSecondConnection } from '../../../test/helpers/second-connection.js'
import { queryRows } from '../../core/db/sql.js'

describe('bulk purchases beside a concurrent writer of the same order', async () => {
  const t = await startTestApp({ worker: false })
  const order = (code: string) => ({
    transaction: { order_id: 'o1', email: 'a@x.cz', shop: 'a.cz', amount: 1 },
    transaction_items: [{ code, price: 1, amount: 1 }],
  })
  const codes = async () =>
    (
      await queryRows<{ code: string }>(
        t.ctx.db,
        sql`SELECT i.code FROM transaction_items i JOIN transactions o ON o.id = i.transaction_id
            WHERE o.account_id = ${t.account.id} AND o.order_id = 'o1' ORDER BY i.position`,
      )
    ).map((r) => r.code)

  it(
    'replaces the lines another transaction committed while the import waited for the order',
    { skip: needsSecondConnection },
    async () => {
      const first = await t.req('POST', '/tracker/transaction-bulk', {
        body: { transaction_data: [order('first')] },
      })
      assert.equal(first.status, 200, first.text)

      // Another writer holds the order and rewrites its lines, as a second import or a PUT of it does.
      await withSecondConnection(t, async ({ other, untilLockWait }) => {
        await other.query('BEGIN')
        const { rows } = await other.query<{ id: number }>(
          `UPDATE transactions SET amount = 5 WHERE account_id = $1 AND order_id = 'o1' RETURNING id`,
          [t.account.id],
        )
        await other.query('DELETE FROM transaction_items WHERE transaction_id = $1', [rows[0]!.id])
        await other.query(
          `INSERT INTO transaction_items (account_id, transaction_id, shop, position, code, title, category,
                                          price, amount, categories)
           VALUES ($1, $2, 'a.cz', 0, 'other', '', '', 1, 1, '{}')`,
          [t.account.id, rows[0]!.id],
        )
        const mine = t.req('POST', '/tracker/transaction-bulk', {
          body: { transaction_data: [order('mine')] },
        })
        // The import's statement waits for the order's row; then the other writer commits.
        await untilLockWait()
        await other.query('COMMIT')
        const res = await mine
        assert.equal(res.status, 200, res.text)
      })
      assert.deepEqual(await codes(), ['mine'])
    },
  )

  // Deadlock-free only if every writer of many orders takes them in one order: the call gives p2 before p1, the
  // other transaction holds p1; a writer that took p2 first would hold it while waiting, and the other's update
  // of p2 would wait too: a deadlock.
  const manyOrders = (amount: number) => ({
    transaction_data: ['p2', 'p1'].map((order_id) => ({
      transaction: { order_id, email: 'a@x.cz', shop: 'a.cz', amount },
      transaction_items: [{ code: 'c', price: 1, amount: 1 }],
    })),
  })
  for (const [what, method, path, body, left] of [
    ['an import', 'POST', '/tracker/transaction-bulk', manyOrders(7), ['p1: 7', 'p2: 7']],
    [
      'a bulk delete',
      'DELETE',
      '/tracker/transaction/delete-bulk',
      { transaction_data: ['p2', 'p1'].map((order_id) => ({ order_id, shop: 'a.cz' })) },
      [],
    ],
  ] as const) {
    it(
      `${what} of many orders takes them in (shop, order id) order`,
      { skip: needsSecondConnection },
      async () => {
        const first = await t.req('POST', '/tracker/transaction-bulk', { body: manyOrders(1) })
        assert.equal(first.status, 200, first.text)
        await withSecondConnection(t, async ({ other, untilLockWait }) => {
          await other.query('BEGIN')
          const hold = `UPDATE transactions SET amount = 5 WHERE account_id = $1 AND order_id = $2`
          await other.query(hold, [t.account.id, 'p1'])
          const mine = t.req(method, path, { body })
          await untilLockWait()
          // p2 is free: the call waits for p1 holding nothing (else NOWAIT fails at once, and the test with it).
          await other.query(
            `SELECT 1 FROM transactions WHERE account_id = $1 AND order_id = 'p2' FOR UPDATE NOWAIT`,
            [t.account.id],
          )
          await other.query(hold, [t.account.id, 'p2'])
          await other.query('COMMIT')
          const res = await mine
          assert.equal(res.status, 200, res.text)
        })
        const rows = await queryRows<{ order_id: string; amount: string }>(
          t.ctx.db,
          sql`SELECT order_id, amount FROM transactions
            WHERE account_id = ${t.account.id} AND order_id IN ('p1', 'p2') ORDER BY order_id`,
        )
        assert.deepEqual(
          rows.map((r) => `${r.order_id}: ${Number(r.amount)}`),
          left,
        )
      },
    )
  }
})
