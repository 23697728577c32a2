import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { createListeningPipeline } from '../../../test/helpers/listening-pipeline.js'
import { ManualClock } from '../../core/clock.js'
import { queryRows } from '../../core/db/sql.js'

/** A single purchase is emitted as a `purchase` signal, in the same database transaction as the order. */
describe('purchase signals', async () => {
  const clock = new ManualClock(new Date('2026-04-01T10:00:00Z'))
  const t = await startTestApp({ clock, worker: false })
  // Purchases become signals only while an automation listens for them.
  await createListeningPipeline(t, { type: 'purchase' })

  const signals = () =>
    queryRows<{ kind: string; email: string; payload: Record<string, unknown> }>(
      t.ctx.db,
      sql`SELECT kind, email, payload FROM signals WHERE account_id = ${t.account.id} ORDER BY id`,
    )
  const post = (orderId: string, email: string, amount: unknown = '12.30') =>
    t.req('POST', '/tracker/transaction', {
      body: {
        transaction: { order_id: orderId, email, shop: 's.cz', amount, timestamp: '2026-03-31 12:00:00' },
      },
    })

  it('POST writes one purchase signal with the order', async () => {
    const res = await post('p1', 'Pay@X.cz')
    assert.equal(res.status, 200)
    assert.deepEqual(await signals(), [
      {
        kind: 'purchase',
        email: 'pay@x.cz',
        payload: {
          transaction_id: res.body.id,
          order_id: 'p1',
          shop: 's.cz',
          amount: 12.3,
          timestamp: '2026-03-31 12:00:00',
        },
      },
    ])
  })

  it('a refused or updated order writes no signal', async () => {
    assert.equal((await post('p1', 'pay@x.cz')).status, 422)
    assert.equal((await post('p2', 'pay@x.cz', 'NaN')).status, 422)
    const put = await t.req('PUT', '/tracker/transaction/p1', {
      body: { transaction: { email: 'pay@x.cz', amount: 1 } },
    })
    assert.equal(put.status, 200)
    assert.equal((await signals()).length, 1)
  })

  it('when the signal cannot be written, the order is not stored either', async () => {
    // Make the signal insert fail for one address: the purchase insert before it must roll back.
    await t.ctx.db.execute(
      sql`ALTER TABLE signals ADD CONSTRAINT signals_test_refuse CHECK (email <> 'refused@x.cz')`,
    )
    try {
      const res = await post('p3', 'refused@x.cz')
      assert.equal(res.status, 500)
      assert.deepEqual(res.body, { message: 'Internal Server Error' })
      const rows = await queryRows<{ n: number }>(
        t.ctx.db,
        sql`SELECT count(*)::int AS n FROM transactions WHERE order_id = 'p3'`,
      )
      assert.equal(rows[0]!.n, 0)
      assert.equal((await signals()).length, 1)
    } finally {
      await t.ctx.db.execute(sql`ALTER TABLE signals DROP CONSTRAINT signals_test_refuse`)
    }
    // The same order goes through once the signal can be written.
    assert.equal((await post('p3', 'refused@x.cz')).status, 200)
    assert.equal((await signals()).length, 2)
  })

  it('GDPR erasure replaces the address on purchases and signals', async () => {
    const list = (await t.req('POST', '/lists', { body: { name: 'L' } })).body.id
    await t.req('POST', `/lists/${list}/subscribe-bulk`, {
      body: { subscriber_data: [{ email: 'gdpr@x.cz' }] },
    })
    assert.equal((await post('g1', 'gdpr@x.cz')).status, 200)
    assert.equal((await t.req('GET', '/subscribers/gdpr@x.cz/transactions')).body.total, 1)
    assert.deepEqual((await t.req('DELETE', '/subscribers/gdpr@x.cz/delete')).body, { deleted: true })
    assert.equal((await t.req('GET', '/subscribers/gdpr@x.cz/transactions')).status, 404)
    const left = await queryRows<{ n: number }>(
      t.ctx.db,
      sql`SELECT (SELECT count(*) FROM transactions WHERE email = 'gdpr@x.cz')
               + (SELECT count(*) FROM signals WHERE email = 'gdpr@x.cz') AS n`,
    )
    assert.equal(Number(left[0]!.n), 0)
    const kept = await queryRows<{ email: string }>(
      t.ctx.db,
      sql`SELECT email FROM transactions WHERE order_id = 'g1'`,
    )
    assert.match(kept[0]!.email, /^erased-[0-9a-f]+@erased\.invalid$/, 'the order stays, without the address')
  })
})
