/**
 * Contract §2, CLI: `tidings account create|key create|key revoke|migrate` as a real child process, on the embedded
 * database (DATA_DIR) and on PostgreSQL (DATABASE_URL), and the embedded database's single owner.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { sql } from 'drizzle-orm'
import { queryRows } from '../../src/core/db/sql.js'
import { sha256Hex } from '../../src/core/ids.js'
import type { AccountService } from '../../src/modules/accounts/index.js'
import { findAccountByKeyHash, insertKeyHash } from '../../src/modules/accounts/accounts.repo.js'
import { createTestDatabase, testDbKind } from '../helpers/databases.js'
import {
  freshInstallation,
  httpGet,
  mapLimit,
  runCli,
  startServerProcess,
  tempDataDir,
} from '../helpers/processes.js'

const KEY = /^[A-Za-z0-9_-]{43,}$/

describe('tidings CLI', async () => {
  const { env, withDb } = await freshInstallation()
  const withAccounts = <T>(fn: (svc: AccountService) => Promise<T>) => withDb((_db, svc) => fn(svc))

  let accountId = 0
  let firstKey = ''
  let secondKey = ''

  it('account create --json prints exactly {"account_id":n,"api_key":"..."}', async () => {
    const res = await runCli(['account', 'create', '--name', 'Shop', '--plan', 'paid', '--json'], env)
    assert.equal(res.code, 0, res.stderr)
    const match = /^\{"account_id":(\d+),"api_key":"([^"]+)"\}\n$/.exec(res.stdout)
    assert.ok(match, `stdout was ${JSON.stringify(res.stdout)}`)
    accountId = Number(match[1])
    firstKey = match[2]!
    assert.ok(accountId >= 1)
    assert.match(firstKey, KEY)
  })

  it('key create --account N --json prints another key of that account', async () => {
    const res = await runCli(['key', 'create', '--account', String(accountId), '--json'], env)
    assert.equal(res.code, 0, res.stderr)
    const printed = JSON.parse(res.stdout) as { account_id: number; api_key: string }
    assert.deepEqual(Object.keys(printed), ['account_id', 'api_key'])
    assert.equal(printed.account_id, accountId)
    assert.match(printed.api_key, KEY)
    assert.notEqual(printed.api_key, firstKey)
    secondKey = printed.api_key
    await withAccounts(async (svc) => {
      assert.deepEqual(await svc.resolveKey(sha256Hex(firstKey)), { id: accountId, plan: 'paid' })
      assert.deepEqual(await svc.resolveKey(sha256Hex(secondKey)), { id: accountId, plan: 'paid' })
    })
  })

  it('account create without --json says the key once in words; the plan defaults to free', async () => {
    const res = await runCli(['account', 'create', '--name', 'Plain'], env)
    assert.equal(res.code, 0, res.stderr)
    const match = /^Account (\d+) created\. API key \(shown once\): (\S+)\n$/.exec(res.stdout)
    assert.ok(match, res.stdout)
    await withAccounts(async (svc) => {
      assert.deepEqual(await svc.resolveKey(sha256Hex(match[2]!)), { id: Number(match[1]), plan: 'free' })
    })
  })

  it('key revoke --key K revokes that key only', async () => {
    const res = await runCli(['key', 'revoke', '--key', firstKey], env)
    assert.equal(res.code, 0, res.stderr)
    assert.equal(res.stdout, 'Key revoked.\n')
    const again = await runCli(['key', 'revoke', '--key', firstKey], env)
    assert.equal(again.code, 1)
    assert.match(again.stderr, /No active API key matches/)
    // The database itself: this process's key cache may still hold what it resolved less than a second ago
    // (a revocation made by another process takes effect within that second, as the cache says).
    await withDb(async (db) => {
      assert.equal(await findAccountByKeyHash(db, sha256Hex(firstKey)), null)
      assert.deepEqual(await findAccountByKeyHash(db, sha256Hex(secondKey)), { id: accountId, plan: 'paid' })
    })
  })

  it('key revoke takes a key that starts with a dash', async () => {
    // base64url: one key in 32 starts with "-", which a naive option parser takes for an option.
    const dashKey = '-' + 'd'.repeat(42)
    await withDb(async (db, svc) => {
      assert.ok(await insertKeyHash(db, accountId, sha256Hex(dashKey)))
      assert.deepEqual(await svc.resolveKey(sha256Hex(dashKey)), { id: accountId, plan: 'paid' })
    })
    const res = await runCli(['key', 'revoke', '--key', dashKey], env)
    assert.equal(res.code, 0, res.stderr)
    assert.equal(res.stdout, 'Key revoked.\n')
    await withDb(async (db) => assert.equal(await findAccountByKeyHash(db, sha256Hex(dashKey)), null))
  })

  it('migrate applies migrations, the job queue’s schema included (again: a no-op)', async () => {
    // PostgreSQL's test databases are cloned from a template that has it already.
    await withDb((db) => db.execute(sql`DROP SCHEMA IF EXISTS pgboss CASCADE`))
    const res = await runCli(['migrate'], env)
    assert.equal(res.code, 0, res.stderr)
    assert.equal(res.stdout, 'Migrations applied.\n')
    // An operator may migrate with a role that can create schemas and run the service with one that cannot.
    const jobTables = await withDb((db) =>
      queryRows<{ n: number }>(
        db,
        sql`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'pgboss'`,
      ),
    )
    assert.ok((jobTables[0]?.n ?? 0) > 0, 'pg-boss has its tables')
    const json = await runCli(['migrate', '--json'], env)
    assert.equal(json.code, 0, json.stderr)
    assert.equal(json.stdout, '{"migrated":true}\n')
  })

  it('answers bad usage with a non-zero exit and a clear message', async () => {
    const cases: [string[], RegExp][] = [
      [['account', 'create'], /account create needs --name/],
      [['account', 'create', '--name', 'X', '--plan', 'gold'], /--plan must be one of free, paid, marketer/],
      [['key', 'create'], /key create needs --account/],
      [['key', 'create', '--account', 'abc'], /key create needs --account/],
      [['key', 'revoke'], /key revoke needs --key/],
      [['frobnicate'], /unknown command "frobnicate"/],
      [['account', 'create', '--name', 'X', '--bogus'], /Unknown option '--bogus'/],
      [['account', 'create', '--name'], /--name/],
      [['copy-to-postgres'], /copy-to-postgres needs --to postgres:\/\//],
      [['copy-to-postgres', '--to', 'mysql://x'], /copy-to-postgres needs --to postgres:\/\//],
      // An option or a word the command does not use is refused, not ignored.
      [
        ['copy-to-postgres', '--to', 'postgres://x', '--plan', 'paid'],
        /copy-to-postgres does not take --plan/,
      ],
      [['account', 'create', '--name', 'X', '--to', 'postgres://x'], /account create does not take --to/],
      [['serve', '--json'], /serve does not take --json/],
      [['migrate', 'now'], /unexpected "now" after migrate/],
      [['key', 'revoke', 'a', 'b'], /unexpected "b" after key revoke/],
      [['key'], /unknown command "key"/],
    ]
    // None of these reaches the database, so they may run side by side.
    const results = await mapLimit(cases, 4, ([args]) => runCli(args, env))
    cases.forEach(([args, message], i) => {
      const res = results[i]!
      assert.equal(res.code, 64, `${args.join(' ')}: exit ${res.code}, ${res.stderr}`)
      assert.match(res.stderr, message, args.join(' '))
      assert.match(res.stderr, /Usage: tidings <command>/, args.join(' '))
      assert.equal(res.stdout, '', args.join(' '))
    })
  })

  it('fails with a clear message on a missing account and on bad configuration', async () => {
    const [missing, badConfig] = await Promise.all([
      runCli(['key', 'create', '--account', '99999'], env),
      runCli(['migrate'], { ...env, DATABASE_URL: 'mysql://x' }),
    ])
    assert.equal(missing.code, 1)
    assert.equal(missing.stderr, 'tidings: Account not found\n')
    assert.equal(badConfig.code, 2)
    assert.equal(badConfig.stderr, 'tidings: DATABASE_URL must start with postgres:// or postgresql://\n')
  })

  it('prints its usage with --help and with no command', async () => {
    const results = await Promise.all([runCli(['--help'], env), runCli([], env)])
    for (const res of results) {
      assert.equal(res.code, 0, res.stderr)
      assert.match(res.stdout, /^Usage: tidings <command>/)
    }
  })

  it(
    'works beside a running server on PostgreSQL; the new key works there at once',
    {
      skip: testDbKind() === 'postgres' ? false : 'PostgreSQL only: the embedded database has one owner',
    },
    async () => {
      const server = await startServerProcess(env)
      try {
        const res = await runCli(['account', 'create', '--name', 'Beside', '--json'], env)
        assert.equal(res.code, 0, res.stderr)
        const { api_key } = JSON.parse(res.stdout) as { api_key: string }
        const lists = await httpGet(`${server.url}/lists`, { key: api_key })
        assert.equal(lists.status, 200)
        assert.deepEqual(lists.body, [])
      } finally {
        assert.deepEqual(await server.stop(), { code: 0, signal: null })
      }
    },
  )
})

describe('tidings CLI while a server holds the embedded database', () => {
  const skip = testDbKind() === 'postgres' ? 'PGlite only: PostgreSQL has no single owner' : false
  const dataDir = tempDataDir()
  const env = { DATA_DIR: dataDir }
  const lockFile = path.join(dataDir, 'tidings.lock')

  it('refuses clearly while it runs, and works again after a graceful shutdown', { skip }, async () => {
    const server = await startServerProcess(env)
    try {
      assert.equal(fs.readFileSync(lockFile, 'utf8').split(' ')[0], String(server.pid))
      assert.equal((await httpGet(`${server.url}/health`)).status, 200)
      const blocked = [
        ['account', 'create', '--name', 'Blocked', '--json'],
        ['key', 'revoke', '--key', 'k'],
        ['migrate'],
        // Refused before it reaches any target (nothing listens on port 1).
        ['copy-to-postgres', '--to', 'postgres://127.0.0.1:1/none'],
      ]
      // A second server (`tidings serve`) is refused alike, and the first keeps running.
      const serve = ['serve']
      const results = await Promise.all(
        [...blocked, serve].map((args) => runCli(args, { ...env, PORT: '0', HOST: '127.0.0.1' })),
      )
      for (const [i, args] of [...blocked, serve].entries()) {
        const res = results[i]!
        assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`)
        assert.equal(res.stdout, '')
        assert.match(res.stderr, /in use by a running Tidings process \(pid \d+\)/)
        assert.ok(res.stderr.includes(`(pid ${server.pid})`), res.stderr)
        assert.match(res.stderr, /Stop it first, or use the admin API/)
      }
      assert.equal((await httpGet(`${server.url}/health`)).status, 200)
    } finally {
      assert.deepEqual(await server.stop(), { code: 0, signal: null }, 'graceful shutdown exits 0')
    }
    assert.equal(fs.existsSync(lockFile), false, 'the lock is released')
    const res = await runCli(['account', 'create', '--name', 'After', '--json'], env)
    assert.equal(res.code, 0, res.stderr)
    assert.match(res.stdout, /^\{"account_id":\d+,"api_key":"[^"]+"\}\n$/)
  })

  it('takes over the lock of a server that was killed', { skip }, async () => {
    const server = await startServerProcess(env)
    assert.equal((await server.kill()).signal, 'SIGKILL')
    assert.equal(
      fs.readFileSync(lockFile, 'utf8').split(' ')[0],
      String(server.pid),
      'a killed server leaves its lock',
    )
    const res = await runCli(['key', 'create', '--account', '1', '--json'], env)
    assert.equal(res.code, 0, res.stderr)
    assert.equal(fs.existsSync(lockFile), false)
  })
})

describe('tidings copy-to-postgres', () => {
  it(
    'copies an embedded installation into an empty PostgreSQL database, where its keys work; not twice',
    { skip: testDbKind() === 'postgres' ? false : 'PostgreSQL only: the copy goes to a PostgreSQL server' },
    async (t) => {
      const env = { DATA_DIR: tempDataDir() }
      const made = await runCli(['account', 'create', '--name', 'Moving', '--plan', 'paid', '--json'], env)
      assert.equal(made.code, 0, made.stderr)
      const { account_id, api_key } = JSON.parse(made.stdout) as { account_id: number; api_key: string }
      const target = await createTestDatabase()
      t.after(async () => {
        await target.handle.close()
        await target.drop()
      })

      const res = await runCli(['copy-to-postgres', '--to', target.url!, '--json'], env)
      assert.equal(res.code, 0, res.stderr)
      const report = JSON.parse(res.stdout) as { tables: { name: string; rows: number }[]; sequences: number }
      assert.deepEqual(
        report.tables.find((x) => x.name === 'accounts'),
        { name: 'accounts', rows: 1 },
      )
      assert.ok(report.sequences > 0)
      assert.deepEqual(await findAccountByKeyHash(target.handle.db, sha256Hex(api_key)), {
        id: account_id,
        plan: 'paid',
      })

      // A DATA_DIR with no database in it (a mistyped path) copies nothing rather than an empty installation.
      const none = await runCli(['copy-to-postgres', '--to', target.url!], { DATA_DIR: tempDataDir() })
      assert.equal(none.code, 2, none.stderr)
      assert.match(none.stderr, /^tidings: there is no embedded database in \S+ \(DATA_DIR\)\n$/)

      const again = await runCli(['copy-to-postgres', '--to', target.url!], env)
      assert.equal(again.code, 2, again.stderr)
      assert.equal(again.stdout, '')
      assert.equal(again.stderr, 'tidings: the target database is not empty: table accounts has rows\n')
    },
  )
})
