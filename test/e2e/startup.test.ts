/**
 * Contract §2, running it: first-run key, BOOTSTRAP_API_KEY, roles, configuration errors, health, OpenAPI and
 * docs, on the embedded database under a fresh DATA_DIR or on a fresh PostgreSQL database. Where main.ts itself is
 * under test (first-run output, roles, exit codes, graceful shutdown) the server is `node --import tsx src/main.ts`,
 * what `npm start` runs; the bootstrap-key flows call startServer in this process, which is much cheaper.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { sql } from 'drizzle-orm'
import fs from 'node:fs'
import path from 'node:path'
import { ConfigError, loadConfig } from '../../src/core/config.js'
import { sha256Hex } from '../../src/core/ids.js'
import { countAccounts } from '../../src/modules/accounts/accounts.repo.js'
import { startServer, type RunningServer } from '../../src/server.js'
import { startTestApp } from '../helpers/app.js'
import { testDbKind } from '../helpers/databases.js'
import {
  exitWithin,
  freePort,
  freshInstallation,
  httpGet,
  isListening,
  runCli,
  runMain,
  signalChild,
  spawnMain,
  startServerProcess,
  tempDataDir,
  waitFor,
  type ServerProcess,
} from '../helpers/processes.js'

const BANNER = /Tidings: created account (\d+)\. Its API key \(shown only now\):\n\n {2}(\S+)\n/g
const ANY_BANNER = /Its API key/

function printedKeys(server: ServerProcess): { accountId: number; key: string }[] {
  return [...server.stdout().matchAll(BANNER)].map((m) => ({ accountId: Number(m[1]), key: m[2]! }))
}

/**
 * startServer (src/server.ts) in this process, with what it writes to stdout meanwhile (passed on as well, so the
 * test runner's own output is untouched). Cheaper than a child process where main.ts itself is not under test.
 */
async function startInProcess(
  env: Record<string, string>,
): Promise<{ server: RunningServer; output: string }> {
  const config = loadConfig({ ...env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent' })
  const write = process.stdout.write
  let output = ''
  process.stdout.write = function (this: typeof process.stdout, chunk: unknown, ...rest: unknown[]) {
    output += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString()
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest)
  } as typeof process.stdout.write
  try {
    return { server: await startServer(config), output }
  } finally {
    process.stdout.write = write
  }
}

async function stopped(server: ServerProcess): Promise<void> {
  assert.deepEqual(await server.stop(), { code: 0, signal: null }, `graceful shutdown\n${server.stderr()}`)
}

describe('first run and BOOTSTRAP_API_KEY', async () => {
  const { env, withDb } = await freshInstallation()
  const bootstrapKey = randomBytes(32).toString('base64url')

  it('prints one API key on the first start of an empty installation; it works, and is never logged', async () => {
    const server = await startServerProcess(env)
    try {
      const printed = printedKeys(server)
      assert.equal(printed.length, 1, server.stdout())
      const { key } = printed[0]!
      assert.equal(server.stdout().split(key).length - 1, 1, 'the key appears once in the output')
      assert.ok(!server.stderr().includes(key))
      const lists = await httpGet(`${server.url}/lists`, { key })
      assert.equal(lists.status, 200)
      assert.deepEqual(lists.body, [])
    } finally {
      await stopped(server)
    }
    await withDb(async (db) => assert.equal(await countAccounts(db), 1))
  })

  it('prints no key on the next start', async () => {
    const server = await startServerProcess(env)
    try {
      assert.deepEqual(printedKeys(server), [])
      assert.doesNotMatch(server.stdout(), /API key/)
    } finally {
      await stopped(server)
    }
    await withDb(async (db) => assert.equal(await countAccounts(db), 1))
  })

  it('creates a marketer account holding BOOTSTRAP_API_KEY after the CLI created accounts', async () => {
    const cli = await runCli(['account', 'create', '--name', 'From CLI', '--json'], env)
    assert.equal(cli.code, 0, cli.stderr)
    const { server, output } = await startInProcess({ ...env, BOOTSTRAP_API_KEY: bootstrapKey })
    try {
      assert.doesNotMatch(output, ANY_BANNER)
      assert.ok(!output.includes(bootstrapKey), 'the bootstrap key is not printed')
      const lists = await httpGet(`${server.url}/lists`, { key: bootstrapKey })
      assert.equal(lists.status, 200)
      assert.deepEqual(lists.body, [])
    } finally {
      await server.stop()
    }
    await withDb(async (db, svc) => {
      assert.equal(await countAccounts(db), 3)
      const account = await svc.resolveKey(sha256Hex(bootstrapKey))
      assert.equal(account?.plan, 'marketer')
    })
  })

  it('is idempotent across restarts', async () => {
    const before = await withDb(async (_db, svc) => svc.resolveKey(sha256Hex(bootstrapKey)))
    const { server, output } = await startInProcess({ ...env, BOOTSTRAP_API_KEY: bootstrapKey })
    try {
      assert.doesNotMatch(output, ANY_BANNER)
      assert.equal((await httpGet(`${server.url}/lists`, { key: bootstrapKey })).status, 200)
    } finally {
      await server.stop()
    }
    await withDb(async (db, svc) => {
      assert.equal(await countAccounts(db), 3)
      assert.deepEqual(await svc.resolveKey(sha256Hex(bootstrapKey)), before)
    })
  })
})

describe('first run through startServer in this process', async () => {
  const { env } = await freshInstallation()

  it('prints one key on the first start and none on the next', async () => {
    const first = await startInProcess(env)
    try {
      const printed = [...first.output.matchAll(BANNER)]
      assert.equal(printed.length, 1, first.output)
      assert.equal((await httpGet(`${first.server.url}/lists`, { key: printed[0]![2]! })).status, 200)
    } finally {
      await first.server.stop()
    }
    const second = await startInProcess(env)
    await second.server.stop()
    assert.doesNotMatch(second.output, ANY_BANNER)
  })
})

describe('BOOTSTRAP_API_KEY on an empty installation, then the CLI', async () => {
  const { env, withDb } = await freshInstallation()
  const bootstrapKey = randomBytes(32).toString('base64url')

  it('creates only the bootstrap account, prints no key, and the CLI adds accounts beside it', async () => {
    const first = await startInProcess({ ...env, BOOTSTRAP_API_KEY: bootstrapKey })
    try {
      assert.doesNotMatch(first.output, ANY_BANNER)
      assert.equal((await httpGet(`${first.server.url}/lists`, { key: bootstrapKey })).status, 200)
    } finally {
      await first.server.stop()
    }
    await withDb(async (db) => assert.equal(await countAccounts(db), 1))
    const cli = await runCli(['account', 'create', '--name', 'After bootstrap', '--json'], env)
    assert.equal(cli.code, 0, cli.stderr)
    const again = await startInProcess({ ...env, BOOTSTRAP_API_KEY: bootstrapKey })
    try {
      assert.doesNotMatch(again.output, ANY_BANNER)
      assert.equal((await httpGet(`${again.server.url}/lists`, { key: bootstrapKey })).status, 200)
    } finally {
      await again.server.stop()
    }
    await withDb(async (db, svc) => {
      assert.equal(await countAccounts(db), 2)
      assert.equal((await svc.resolveKey(sha256Hex(bootstrapKey)))?.plan, 'marketer')
    })
  })
})

describe('ROLE', async () => {
  const { env } = await freshInstallation()

  it('ROLE=worker starts no HTTP listener', async () => {
    const port = await freePort()
    const server = await startServerProcess({ ...env, ROLE: 'worker', PORT: String(port) })
    try {
      assert.equal(server.started.role, 'worker')
      assert.equal(server.url, undefined)
      assert.equal(await isListening(port), false)
      // A worker writes mail's links: without PUBLIC_URL they would lead to its own localhost.
      assert.match(server.stdout(), /PUBLIC_URL is not set/)
    } finally {
      await stopped(server)
    }
  })

  it('ROLE=api listens', async () => {
    const port = await freePort()
    const publicUrl = `http://127.0.0.1:${port}`
    const server = await startServerProcess({
      ...env,
      ROLE: 'api',
      PORT: String(port),
      PUBLIC_URL: publicUrl,
    })
    try {
      assert.doesNotMatch(server.stdout(), /PUBLIC_URL is not set/)
      assert.equal(server.started.role, 'api')
      assert.equal(server.url, `http://127.0.0.1:${port}`)
      assert.equal(await isListening(port), true)
      const health = await httpGet(`${server.url}/health`)
      assert.equal(health.status, 200)
    } finally {
      await stopped(server)
    }
  })
})

describe('a stop signal during start-up', () => {
  const skip = testDbKind() === 'postgres' ? 'PGlite only: its lock file shows the start is under way' : false

  it('is acted on once the start is done: a clean shutdown, exit 0, lock released', { skip }, async () => {
    const dataDir = tempDataDir()
    const lockFile = path.join(dataDir, 'tidings.lock')
    const main = spawnMain({ DATA_DIR: dataDir })
    // The lock is taken as the embedded database opens, on a fresh DATA_DIR seconds before the start is done.
    await waitFor(() => fs.existsSync(lockFile), 60_000, 'the lock file')
    signalChild(main.child, 'SIGTERM')
    assert.deepEqual(await exitWithin(main, 60_000), { code: 0, signal: null }, main.stderr())
    assert.match(main.stdout(), /"msg":"tidings started"[\s\S]*"msg":"shutting down"/)
    assert.equal(fs.existsSync(lockFile), false, 'the lock is released')
  })
})

describe('invalid configuration', () => {
  it('exits with code 2 and says what is wrong, through npm start and tidings serve', async () => {
    const dataDir = tempDataDir()
    const [role, database, port] = await Promise.all([
      runMain({ DATA_DIR: dataDir, ROLE: 'bogus' }),
      runMain({ DATA_DIR: dataDir, DATABASE_URL: 'mysql://x' }),
      runCli(['serve'], { DATA_DIR: dataDir, PORT: 'eighty' }),
    ])
    assert.deepEqual([role.code, role.stderr], [2, 'tidings: ROLE must be all, api or worker, got "bogus"\n'])
    assert.deepEqual(
      [database.code, database.stderr],
      [2, 'tidings: DATABASE_URL must start with postgres:// or postgresql://\n'],
    )
    assert.deepEqual([port.code, port.stderr], [2, 'tidings: PORT must be an integer ≥ 0, got "eighty"\n'])
    for (const res of [role, database, port]) assert.equal(res.stdout, '')
  })

  it('names each bad variable', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ SMTP_URL: 'http://mail' }, /^SMTP_URL must start with smtp:\/\/ or smtps:\/\/$/],
      [{ ADMIN_KEY: 'short' }, /^ADMIN_KEY must be at least 16 characters$/],
      [{ RATE_LIMIT_PER_MINUTE: '-1' }, /^RATE_LIMIT_PER_MINUTE must be an integer ≥ 0, got "-1"$/],
      [{ BODY_LIMIT_BYTES: '10' }, /^BODY_LIMIT_BYTES must be an integer ≥ 1024, got "10"$/],
      [{ PUBLIC_URL: 'not a url' }, /^PUBLIC_URL is not a URL/],
      [{ DB_POOL_SIZE: '0' }, /^DB_POOL_SIZE must be an integer ≥ 1/],
      [{ BOUNCE_SMTP_PORT: 'x' }, /^BOUNCE_SMTP_PORT must be an integer/],
    ]
    for (const [env, message] of cases) {
      assert.throws(
        () => loadConfig(env),
        (err: Error) => err instanceof ConfigError && message.test(err.message),
      )
    }
    const ok = loadConfig({})
    assert.equal(ok.port, 3000)
    assert.equal(ok.role, 'all')
    assert.equal(ok.rateLimitPerMinute, 1000)
    assert.equal(ok.bodyLimitBytes, 10 * 1024 * 1024)
    assert.equal(loadConfig({ RATE_LIMIT_PER_MINUTE: '0' }).rateLimitPerMinute, 0)
  })
})

describe('health, OpenAPI and docs', async () => {
  const t = await startTestApp({ config: { adminKey: 'admin-key-for-openapi-0123456789' } })

  it('GET /health answers 200 {status:"ok"} without a key', async () => {
    const res = await t.req('GET', '/health', { key: null })
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.equal(res.body.status, 'ok')
  })

  it('GET /openapi.json is OpenAPI 3.1 and documents every route with its responses', async () => {
    const res = await t.req('GET', '/openapi.json', { key: null })
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    const spec = res.body as {
      openapi: string
      paths: Record<string, Record<string, { responses?: Record<string, { content?: unknown }> }>>
    }
    assert.match(spec.openapi, /^3\.1\.\d+$/)
    const routes = registeredRoutes(t.app.printRoutes({ commonPrefix: false }))
    const documented = new Set(Object.keys(spec.paths))
    const expected = routes.filter((r) => r.path !== '/openapi.json' && !r.path.startsWith('/docs'))
    assert.ok(expected.some((r) => r.path === '/lists/{id}'))
    assert.ok(expected.some((r) => r.path === '/admin/accounts'))
    for (const route of expected) {
      assert.ok(documented.has(route.path), `${route.path} is documented`)
      for (const method of route.methods) {
        if (method === 'HEAD') continue
        const op = spec.paths[route.path]![method.toLowerCase()]
        assert.ok(op, `${method} ${route.path} is documented`)
        const success = Object.keys(op.responses ?? {}).find((code) => /^[23]\d\d$/.test(code))
        assert.ok(success, `${method} ${route.path} documents its success response`)
        // A redirect (3xx) or 204 has no body to describe; every other success response has a schema.
        if (/^2\d\d$/.test(success) && success !== '204') {
          assert.ok(
            op.responses![success]!.content,
            `${method} ${route.path} has a ${success} response schema`,
          )
        }
      }
    }
    for (const path of documented) {
      assert.ok(
        expected.some((r) => r.path === path),
        `${path} is a registered route`,
      )
    }
    // A keyed route's body may be JSON or form-encoded (form-body.ts), and the document says which.
    const subscribe = spec.paths['/lists/{id}/subscribe']!.post as { requestBody?: { content?: object } }
    assert.deepEqual(Object.keys(subscribe.requestBody?.content ?? {}), [
      'application/json',
      'application/x-www-form-urlencoded',
    ])
  })

  // Generated clients take their method names from operationId. The test above proves every registered route but
  // /openapi.json and /docs is in the document (so no route escapes this one by being hidden); this one proves
  // each documented operation is named, in lowerCamelCase, and no two share a name.
  it('names every documented operation with a unique lowerCamelCase operationId', async () => {
    const res = await t.req('GET', '/openapi.json', { key: null })
    const spec = res.body as { paths: Record<string, Record<string, { operationId?: unknown }>> }
    const owners = new Map<string, string>()
    for (const [path, ops] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const route = `${method.toUpperCase()} ${path}`
        assert.equal(typeof op.operationId, 'string', `${route} has an operationId`)
        const id = op.operationId as string
        assert.match(id, /^[a-z][a-zA-Z0-9]*$/, `${route}: operationId ${id} is lowerCamelCase`)
        assert.equal(owners.get(id), undefined, `${route} and ${owners.get(id)} share operationId ${id}`)
        owners.set(id, route)
      }
    }
    // The count of routes today, with the admin API on: a module whose routes vanished would pass the loop above.
    assert.ok(owners.size >= 80, `${owners.size} operations documented`)
    assert.equal(owners.get('sendCampaignAliasGet'), 'GET /campaign/{id}/send')
    assert.equal(owners.get('createAccount'), 'POST /admin/accounts')
    assert.equal(owners.get('trackOpen'), 'GET /t/o/{token}')
  })

  it('GET /docs serves HTML', async () => {
    const res = await t.req('GET', '/docs', { key: null })
    assert.equal(res.status, 200)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.match(res.text, /<html/i)
  })
})

/**
 * The routes of a Fastify app from `printRoutes({commonPrefix: false})`: a tree, four columns per level, each
 * line one path segment with the methods registered there, e.g. `│   └── /:id (GET, HEAD, PUT)`.
 */
function registeredRoutes(tree: string): { path: string; methods: string[] }[] {
  const routes: { path: string; methods: string[] }[] = []
  const stack: string[] = []
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (!m) continue
    const depth = m[1]!.length / 4
    stack.length = depth
    stack.push(m[2]!)
    if (!m[3]) continue
    const path = stack
      .join('')
      .replace(/\/+/g, '/')
      .replace(/:(\w+)/g, '{$1}')
    routes.push({ path: path === '' ? '/' : path, methods: m[3].split(', ') })
  }
  return routes
}

describe('processes starting together on one PostgreSQL database', async () => {
  it('all start: the job queue sets up its schema under the migration lock', async (t) => {
    if (testDbKind() !== 'postgres') {
      t.skip('PostgreSQL only: the embedded database has a single owner process')
      return
    }
    const inst = await freshInstallation()
    await inst.migrate()
    // As on a new database: pg-boss has not made its schema yet (a migrated template may hold it).
    await inst.withDb((db) => db.execute(sql`DROP SCHEMA IF EXISTS pgboss CASCADE`))
    const env = { ...inst.env, ROLE: 'worker', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent' }
    const starts = await Promise.allSettled([1, 2, 3, 4].map(() => startServer(loadConfig(env))))
    await Promise.all(starts.map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)))
    assert.deepEqual(
      starts.map((s) => (s.status === 'fulfilled' ? 'started' : String(s.reason))),
      ['started', 'started', 'started', 'started'],
    )
  })
})
