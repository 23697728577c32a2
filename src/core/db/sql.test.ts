import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/databases.js'
import { queryRowsOn } from './sql.js'

describe('queryRowsOn', () => {
  let t: TestDatabase
  before(async () => {
    t = await createTestDatabase()
    await t.handle.executeSql('CREATE TABLE query_on_probe (n int)')
  })
  after(async () => {
    await t.handle.close()
    await t.drop()
  })

  it("runs inside the transaction it is given: it sees the transaction's own uncommitted rows", async () => {
    const seen = await t.handle.db.transaction(async (tx) => {
      await tx.execute(sql`INSERT INTO query_on_probe (n) VALUES (1)`)
      return queryRowsOn<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM query_on_probe`)
    })
    assert.deepEqual(seen, [{ n: 1 }])
  })

  it('runs prepared on the handle, with each call its own values', async () => {
    for (const v of [3, 4, 3]) {
      const rows = await queryRowsOn<{ n: number }>(
        t.handle,
        sql`SELECT ${v}::int + count(*)::int AS n FROM query_on_probe`,
      )
      assert.deepEqual(rows, [{ n: v + 1 }])
    }
  })
})
