import assert from 'node:assert/strict'
import net from 'node:net'
import { after, describe, it } from 'node:test'
import { createTestDatabase, testDbKind } from '../../../test/helpers/databases.js'
import { openDatabase } from './client.js'

const SPACE = 7_200_399
/** PGlite's one connection lives as long as the database and nothing can stand between it and its client. */
const connectionsOfTheirOwn =
  testDbKind() === 'postgres' ? false : 'PostgreSQL only: PGlite has no connection to end or to pool'

describe('session locks', async () => {
  const db = await createTestDatabase()
  after(async () => {
    await db.handle.close()
    await db.drop()
  })

  /** The lock of `key`, which must be free. */
  const take = async (key: number) => {
    const lock = await db.handle.sessionLock(SPACE, key)
    assert.ok(typeof lock === 'object', `lock ${key}: ${String(lock)}`)
    return lock
  }
  /** Asserts the lock of `key` is free, by taking and releasing it. */
  const assertFree = async (key: number) => (await take(key)).release()

  it('are held until released: taken for anyone else meanwhile, free again after', async () => {
    const first = await take(1)
    assert.equal(first.lost, false)
    assert.equal(await db.handle.sessionLock(SPACE, 1), 'taken')
    await first.release()
    await assertFree(1)
  })

  it(
    'are lost when the server ends their connection, and free then',
    { skip: connectionsOfTheirOwn },
    async () => {
      const lock = await take(2)
      const holder = await db.handle.executeSql(
        `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.locktype = 'advisory' AND l.classid = ${SPACE} AND l.objid = 2 AND l.objsubid = 2`,
      )
      assert.deepEqual(holder.rows, [{ application_name: 'tidings lock' }], 'pg_stat_activity names it')
      await db.handle.executeSql(
        `SELECT pg_terminate_backend(pid) FROM pg_locks
       WHERE locktype = 'advisory' AND classid = ${SPACE} AND objid = 2 AND objsubid = 2
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      )
      for (let i = 0; i < 100 && !lock.lost; i++) await new Promise((r) => setTimeout(r, 20))
      assert.equal(lock.lost, true)
      await assertFree(2)
    },
  )

  it(
    'are refused through a pooler: one in between, or unnamed statements',
    { skip: connectionsOfTheirOwn },
    async () => {
      // A pass-through proxy, as a pooler is: the server's session sees the proxy's port, not this client's.
      const target = new URL(db.url!)
      const host = decodeURIComponent(target.hostname) || '127.0.0.1'
      const port = Number(target.port || 5432)
      const proxy = net.createServer((inbound) => {
        const outbound = host.startsWith('/')
          ? net.connect(`${host}/.s.PGSQL.${port}`)
          : net.connect(port, host)
        inbound.pipe(outbound).pipe(inbound)
        inbound.on('error', () => outbound.destroy())
        outbound.on('error', () => inbound.destroy())
      })
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
      const proxied = new URL(db.url!)
      proxied.hostname = '127.0.0.1'
      proxied.port = String((proxy.address() as net.AddressInfo).port)
      proxied.searchParams.delete('host')
      const behind = await openDatabase({ databaseUrl: proxied.toString() })
      const unnamed = await openDatabase({ databaseUrl: db.url, preparedStatements: false })
      try {
        assert.equal(await behind.sessionLock(SPACE, 3), 'pooled')
        assert.equal(await unnamed.sessionLock(SPACE, 3), 'pooled')
        await assertFree(3)
      } finally {
        await behind.close()
        await unnamed.close()
        proxy.close()
      }
    },
  )
})
