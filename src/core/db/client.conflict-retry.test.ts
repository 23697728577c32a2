import { after, before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/databases.js'
import { needsSecondConnection, withSecondConnection } from '../../../test/helpers/second-connection.js'
import { queryRows } from './sql.js'

/**
 * A statement outside a transaction that PostgreSQL aborts to break a deadlock: the other transaction holds row
 * 2, the statement takes row 1 and waits for 2, then the other wants 1. The statement waited longer, so its
 * deadlock check runs first and it is the one aborted.
 */
describe('a statement outside a transaction, aborted for a deadlock', { skip: needsSecondConnection }, () => {
  let db: TestDatabase
  before(async () => {
    db = await createTestDatabase()
    await db.handle.executeSql(
      `CREATE TABLE scratch (id int PRIMARY KEY, v text); INSERT INTO scratch VALUES (1, 'a'), (2, 'b')`,
    )
  })
  after(async () => {
    await db.handle.close()
    await db.drop()
  })
  const values = async () =>
    (await queryRows<{ v: string }>(db.handle.db, sql`SELECT v FROM scratch ORDER BY id`)).map((r) => r.v)

  // Row 1, then row 2, whatever order their versions have in the table by now.
  const both = `WITH l AS (SELECT id FROM scratch ORDER BY id FOR UPDATE)
    UPDATE scratch SET v = 'ours' FROM l WHERE scratch.id = l.id`

  for (const [how, run] of [
    ['through drizzle', () => db.handle.db.execute(sql.raw(both))],
    ['as a prepared statement', () => db.handle.prepared('both', both, [])],
  ] as const) {
    it(`is run again and writes, ${how}`, async () => {
      await db.handle.executeSql(`UPDATE scratch SET v = 'a'`)
      await withSecondConnection({ db }, async ({ other, untilLockWait }) => {
        await other.query('BEGIN')
        await other.query(`UPDATE scratch SET v = 'other' WHERE id = 2`)
        // Started now (a drizzle query runs only once awaited), settled after the other transaction commits.
        const ours = (async () => void (await run()))()
        await untilLockWait()
        await other.query(`UPDATE scratch SET v = 'other' WHERE id = 1`)
        await other.query('COMMIT')
        await ours
      })
      assert.deepEqual(await values(), ['ours', 'ours'])
    })
  }
})
