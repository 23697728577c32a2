import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/databases.js'
import { openDatabase, type DbHandle } from './client.js'
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

describe('prepared statements on the connection', () => {
  let t: TestDatabase
  before(async () => {
    t = await createTestDatabase()
  })
  after(async () => {
    await t.handle.close()
    await t.drop()
  })

  /**
   * What the connection that ran a statement through queryRowsOn keeps prepared afterwards. On PostgreSQL a
   * pool of one connection, so the check runs where the statement ran; PGlite has no pool and never names one.
   */
  async function keptPrepared(preparedStatements: boolean): Promise<string[]> {
    const handle: DbHandle = t.url
      ? await openDatabase({ databaseUrl: t.url, poolSize: 1, preparedStatements })
      : t.handle
    try {
      const rows = await queryRowsOn<{ n: number }>(handle, sql`SELECT ${5}::int AS n`)
      assert.deepEqual(rows, [{ n: 5 }])
      const kept = await handle.executeSql('SELECT name FROM pg_prepared_statements ORDER BY name')
      return kept.rows.map((r) => String(r.name))
    } finally {
      if (handle !== t.handle) await handle.close()
    }
  }

  it('keeps the statement prepared under its name on PostgreSQL (PGlite runs it plainly)', async () => {
    const kept = await keptPrepared(true)
    if (t.url) assert.match(kept.join(','), /^p_[0-9a-f]{20}$/)
    else assert.deepEqual(kept, [])
  })

  it('keeps nothing prepared when prepared statements are turned off (DB_PREPARED_STATEMENTS=0)', async () => {
    assert.deepEqual(await keptPrepared(false), [])
  })
})
