import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { needsSecondConnection, withSecondConnection } from '../../../test/helpers/second-connection.js'
import { queryRows } from '../../core/db/sql.js'

describe('a bulk update that PostgreSQL picks to break a deadlock', async () => {
  const t = await startTestApp({ worker: false })
  const list = (await t.req('POST', '/lists', { body: { name: 'L' } })).body.id as number
  for (const email of ['a@x.cz', 'b@x.cz'])
    await t.req('POST', `/lists/${list}/subscribe`, { body: { subscriber_data: { email } } })
  const names = async () =>
    (
      await queryRows<{ email: string; name: string }>(
        t.ctx.db,
        sql`SELECT email, name FROM contacts WHERE account_id = ${t.account.id} ORDER BY email`,
      )
    ).map((r) => `${r.email}: ${r.name}`)
  const rename = `UPDATE contacts SET name = 'other' WHERE account_id = $1 AND email = $2`

  it('is run again and succeeds, instead of answering 500', { skip: needsSecondConnection }, async () => {
    await withSecondConnection(t, async ({ other, untilLockWait }) => {
      // Another transaction holds b; the import takes a, then waits for b.
      await other.query('BEGIN')
      await other.query(rename, [t.account.id, 'b@x.cz'])
      const bulk = t.req('PUT', `/lists/${list}/update-subscribers-bulk`, {
        body: {
          subscriber_data: [
            { email: 'a@x.cz', name: 'bulk' },
            { email: 'b@x.cz', name: 'bulk' },
          ],
        },
      })
      await untilLockWait()
      // Now the other transaction wants a: a deadlock. The import has waited longer, so its deadlock check
      // runs first and PostgreSQL aborts it; this update then goes through.
      await other.query(rename, [t.account.id, 'a@x.cz'])
      await other.query('COMMIT')
      const res = await bulk
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body, { updates: 2 })
    })
    assert.deepEqual(await names(), ['a@x.cz: bulk', 'b@x.cz: bulk'])
  })
})
