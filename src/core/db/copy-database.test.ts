import { after, describe, it, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { buildApp } from '../../app.js'
import { loadConfig, type Config } from '../config.js'
import { createContext, MIGRATIONS_DIR, type AppContext } from '../context.js'
import { createAccountService } from '../../modules/index.js'
import pg from 'pg'
import { createTestDatabase, testDbKind } from '../../../test/helpers/databases.js'
import { openDatabase, type DbHandle } from './client.js'
import { CopyRefusedError, copyDatabase, loadOrder } from './copy-database.js'

/** Every row of every table of `public`, as text, sorted: two databases holding the same data read the same. */
async function contents(db: DbHandle): Promise<Record<string, string[]>> {
  const { rows } = await db.executeSql(
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`,
    [],
  )
  const out: Record<string, string[]> = {}
  for (const { name } of rows as { name: string }[]) {
    const r = await db.executeSql(`SELECT t::text AS r FROM "${name}" t ORDER BY 1`, [])
    out[name] = (r.rows as { r: string }[]).map((x) => x.r)
  }
  return out
}

describe('copying an installation to another database (copy-to-postgres)', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidings-copy-'))
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const config: Config = {
    ...loadConfig({}),
    dataDir,
    logLevel: 'silent',
    publicUrl: 'http://127.0.0.1:3000',
    rateLimitPerMinute: 0,
  }

  // An installation on the embedded database, used through its API: rows of many tables and column types
  // (arrays, jsonb, numeric, dates), then closed, as the command finds it.
  const ctx = await createContext(config)
  const app = await buildApp(ctx)
  const { api_key: key } = await createAccountService(ctx).createAccount('Shop', 'marketer')
  const call = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const res = await app.inject({
      method,
      url,
      headers: { key },
      ...(body ? { payload: body as object } : {}),
    })
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.body}`)
    return res.json()
  }
  const list = (await call('POST', '/lists', { name: 'Customers' })).id as number
  for (const [email, tags] of [
    ['a@shop.example', ['vip']],
    ['b@shop.example', []],
  ] as const)
    await call('POST', `/lists/${list}/subscribe`, {
      subscriber_data: { email, name: 'Jana', tags, custom_fields: { shoe: { value: 42, type: 'int' } } },
    })
  await call('POST', '/tracker/transaction', {
    transaction: { order_id: 'o-1', email: 'a@shop.example', amount: 1234.56, shop: 'eshop' },
    transaction_items: [{ code: 'p1', title: 'Boots', price: 1234.56, amount: 1 }],
  })
  await call('POST', '/templates', { name: 'Welcome', html: '<p>Hi *|NAME|*</p>' })
  await app.close()
  await ctx.close()
  {
    // A jsonb `null`, which is not SQL NULL (a copy through JSON made it one, against the column's NOT NULL).
    const db = await openDatabase({ dataDir })
    await db.executeSql(
      "UPDATE contacts SET custom_fields = 'null'::jsonb WHERE email = 'b@shop.example'",
      [],
    )
    await db.close()
  }

  it('copies every row, the secrets over the target’s own, and ids go on where they were', async (t) => {
    const target = await createTestDatabase()
    const source = await openDatabase({ dataDir })
    // The app on the copy (below) closes the target's handle.
    const opened: { moved?: AppContext } = {}
    t.after(async () => {
      await (opened.moved ? opened.moved.close() : target.handle.close())
      await source.close()
      await target.drop()
    })
    await target.handle.migrate(MIGRATIONS_DIR)
    // A process started on the target once: it made secrets of its own, which the source's replace.
    await target.handle.executeSql(
      "INSERT INTO instance_settings (key, value) VALUES ('link_secret', 'the target''s own')",
      [],
    )

    const report = await copyDatabase(source, target.handle, MIGRATIONS_DIR)
    const rows = Object.fromEntries(report.tables.map((t) => [t.name, t.rows]))
    assert.equal(rows.lists, 1)
    assert.equal(rows.contacts, 2)
    assert.equal(rows.memberships, 2)
    assert.equal(rows.transaction_items, 1)
    assert.ok(report.sequences > 10, String(report.sequences))
    // Parents before the rows that refer to them.
    const at = (t: string) => report.tables.findIndex((x) => x.name === t)
    assert.ok(at('accounts') < at('lists') && at('lists') < at('memberships'))
    assert.deepEqual(await contents(target.handle), await contents(source))

    // The installation runs on the copy: the same key, the same records, and the next id after the last.
    const moved = await createContext(config, { dbHandle: target.handle })
    opened.moved = moved
    const app2 = await buildApp(moved)
    t.after(() => app2.close())
    const get = await app2.inject({
      method: 'GET',
      url: `/lists/${list}/subscriber/a@shop.example`,
      headers: { key },
    })
    assert.equal(get.statusCode, 200, get.body)
    const created = await app2.inject({
      method: 'POST',
      url: '/lists',
      headers: { key },
      payload: { name: 'Next' },
    })
    assert.equal(created.json().id, list + 1)
  })

  /** The installation above, and a new database to copy it to; both closed (and the target dropped) after `t`. */
  const sourceAndTarget = async (t: TestContext) => {
    const target = await createTestDatabase()
    const source = await openDatabase({ dataDir })
    t.after(async () => {
      await target.handle.close()
      await source.close()
      await target.drop()
    })
    return { target, source }
  }

  it('refuses a target that has data of its own, and writes nothing to it', async (t) => {
    const { target, source } = await sourceAndTarget(t)
    await copyDatabase(source, target.handle, MIGRATIONS_DIR)
    await target.handle.executeSql("UPDATE lists SET name = 'Renamed there'", [])
    const before = await contents(target.handle)
    await assert.rejects(copyDatabase(source, target.handle, MIGRATIONS_DIR), (err: Error) => {
      assert.ok(err instanceof CopyRefusedError)
      assert.match(err.message, /not empty: table \w+ has rows/)
      return true
    })
    assert.deepEqual(await contents(target.handle), before)
  })

  it(
    'a row another process writes to the target while the copy waits for its lock makes it refuse',
    // Two processes on one database: PostgreSQL only (the embedded one has one connection).
    { skip: testDbKind() === 'postgres' ? false : 'PostgreSQL only: a second connection to the target' },
    async (t) => {
      const { target, source } = await sourceAndTarget(t)
      await target.handle.migrate(MIGRATIONS_DIR)
      const other = new pg.Client({ connectionString: target.url! })
      await other.connect()
      // Ended here, not in an after hook: the target is dropped in one, which would cut it off first.
      let blocked = false
      try {
        // A service started on the target: its insert holds the table until it commits, unseen by the copy's check.
        await other.query('BEGIN')
        await other.query("INSERT INTO accounts (id, name) VALUES (1000, 'Started there')")
        const copy = copyDatabase(source, target.handle, MIGRATIONS_DIR)
        const settled = copy.then(
          () => true,
          () => true,
        )
        // Until the copy waits for a lock on the target, or ends (which it must not: the row is not committed).
        const waiting = async () => {
          const { rows } = await other.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())',
          )
          return rows[0]!.n > 0
        }
        for (let i = 0; i < 200 && !blocked; i++) {
          const done = await Promise.race([settled, new Promise((r) => setTimeout(() => r(false), 50))])
          if (done) break
          blocked = await waiting()
        }
        await other.query('COMMIT')
        await assert.rejects(copy, (err: Error) => {
          assert.ok(err instanceof CopyRefusedError, err.message)
          assert.match(err.message, /not empty: table accounts has rows/)
          return true
        })
      } finally {
        await other.end()
      }
      assert.ok(blocked, 'the copy waited for the other process')
      const { rows } = await target.handle.executeSql('SELECT id, name FROM accounts', [])
      assert.deepEqual(rows, [{ id: 1000, name: 'Started there' }])
    },
  )

  it('a row the target refuses fails the copy, naming the table but not the rows, and leaves nothing', async (t) => {
    const { target, source } = await sourceAndTarget(t)
    await target.handle.migrate(MIGRATIONS_DIR)
    await target.handle.executeSql(
      "ALTER TABLE contacts ADD CONSTRAINT not_b CHECK (email <> 'b@shop.example')",
      [],
    )
    await assert.rejects(copyDatabase(source, target.handle, MIGRATIONS_DIR), (err: Error) => {
      assert.match(err.message, /^table contacts: .*not_b/)
      assert.ok(!err.message.includes('shop.example'), err.message)
      return true
    })
    const { rows } = await target.handle.executeSql('SELECT count(*)::int AS n FROM accounts', [])
    assert.deepEqual(rows, [{ n: 0 }])
  })

  it('orders tables parents first, and refuses a cycle', () => {
    const refs = [
      { child: 'c', parent: 'b' },
      { child: 'b', parent: 'a' },
      { child: 'a', parent: 'a' },
    ]
    assert.deepEqual(loadOrder(['c', 'b', 'a'], refs), ['a', 'b', 'c'])
    assert.throws(() => loadOrder(['a', 'b'], [...refs, { child: 'a', parent: 'b' }]), CopyRefusedError)
  })
})
