import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { queryRows } from './sql.js'
import { createTestDatabase, testDbKind } from '../../../test/helpers/databases.js'

const connectionsToCut =
  testDbKind() === 'postgres' ? false : 'PostgreSQL only: PGlite has no connection to cut'
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('a pooled connection cut while a transaction holds it', async () => {
  const db = await createTestDatabase()
  after(async () => {
    await db.handle.close()
    await db.drop()
  })

  it(
    'fails that transaction, not the process, and the pool goes on',
    { skip: connectionsToCut },
    async () => {
      const outcome = await db.handle.db
        .transaction(async (tx) => {
          const [row] = await queryRows<{ pid: number }>(tx, sql`SELECT pg_backend_pid() AS pid`)
          const pid = Number(row?.pid)
          // As a PostgreSQL restart or failover does, between two statements of the transaction: the client
          // hears of it while no query of its own runs, and emits 'error' (pg's Client), which no one handled.
          await db.handle.executeSql(`SELECT pg_terminate_backend(${pid})`)
          for (let i = 0; i < 100; i++) {
            const left = await db.handle.executeSql(`SELECT 1 FROM pg_stat_activity WHERE pid = ${pid}`)
            if (left.rows.length === 0) break
            await pause(20)
          }
          await pause(100)
          await tx.execute(sql`SELECT 1`)
        })
        .then(
          () => 'committed',
          () => 'failed',
        )
      assert.equal(outcome, 'failed')
      assert.deepEqual((await db.handle.executeSql('SELECT 1 AS one')).rows, [{ one: 1 }])
    },
  )
})
