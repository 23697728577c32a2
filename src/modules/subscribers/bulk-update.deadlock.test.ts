import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import pg from 'pg'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { testDbKind } from '../../../test/helpers/databases.js'
import { queryRows } from '../../core/db/sql.js'

const skip =
  testDbKind() === 'postgres'
    ? false
    : 'PostgreSQL only: the embedded database runs one transaction at a time'

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

  it('is run again and succeeds, instead of answering 500', { skip }, async () => {
    const other = new pg.Client({ connectionString: t.db.url })
    const watcher = new pg.Client({ connectionString: t.db.url })
    await other.connect()
    await watcher.connect()
    const lockWaits = async () =>
      (
        await watcher.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        )
      ).rowCount!
    try {
      // Another transaction holds b; the import takes a, then waits for b.
      await other.query('BEGIN')
      await other.query(`UPDATE contacts SET name = 'other' WHERE account_id = $1 AND email = 'b@x.cz'`, [
        t.account.id,
      ])
      const bulk = t.req('PUT', `/lists/${list}/update-subscribers-bulk`, {
        body: {
          subscriber_data: [
            { email: 'a@x.cz', name: 'bulk' },
            { email: 'b@x.cz', name: 'bulk' },
          ],
        },
      })
      let waiting = 0
      for (let i = 0; i < 200 && waiting === 0; i++) {
        waiting = await lockWaits()
        if (waiting === 0) await new Promise((r) => setTimeout(r, 25))
      }
      assert.equal(waiting, 1, 'the import never waited for b')
      // Now the other transaction wants a: a deadlock. The import has waited longer, so its deadlock check
      // runs first and PostgreSQL aborts it; this update then goes through.
      await other.query(`UPDATE contacts SET name = 'other' WHERE account_id = $1 AND email = 'a@x.cz'`, [
        t.account.id,
      ])
      await other.query('COMMIT')
      const res = await bulk
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body, { updates: 2 })
      assert.deepEqual(await names(), ['a@x.cz: bulk', 'b@x.cz: bulk'])
    } finally {
      await other.end()
      await watcher.end()
    }
  })
})
