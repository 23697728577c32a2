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
      let heard = false
      const outcome = await db.handle.db
        .transaction(async (tx) => {
          const [row] = await queryRows<{ pid: number }>(tx, sql`SELECT pg_backend_pid() AS pid`)
          const pid = Number(row?.pid)
          // As a PostgreSQL restart or failover does, between two statements of the transaction: the client
          // hears of it while no query of its own runs, and emits 'error' (pg's Client), which no one handled.
          await db.handle.executeSql(`SELECT pg_terminate_backend(${pid})`)
          // pg's Client marks itself unqueryable just before it emits that 'error' (client.js,
          // _handleErrorEvent): waiting for the mark, not for a time, the emit has happened on any machine.
          const client = (tx as unknown as { session: { client: { _queryable: boolean } } }).session.client
          for (let i = 0; i < 250 && client._queryable; i++) await pause(20)
          heard = !client._queryable
          await tx.execute(sql`SELECT 1`)
        })
        .then(
          () => 'committed',
          () => 'failed',
        )
      assert.equal(heard, true, 'the client heard of the cut while idle')
      assert.equal(outcome, 'failed')
      assert.deepEqual((await db.handle.executeSql('SELECT 1 AS one')).rows, [{ one: 1 }])
    },
  )
})
