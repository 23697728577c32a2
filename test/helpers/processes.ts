/**
 * Tidings as child processes (the CLI and `src/main.ts`), for end-to-end tests of start-up, shutdown and the
 * embedded database's single owner. Every wait is bounded; every process is stopped by its own PID.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after } from 'node:test'
import { openDatabase, type Db } from '../../src/core/db/client.js'
import { systemClock } from '../../src/core/clock.js'
import { MIGRATIONS_DIR } from '../../src/core/context.js'
import { createAccountService, type AccountService } from '../../src/modules/accounts/index.js'
import { createTestDatabase, testDbKind } from './databases.js'

export const ROOT = path.resolve(import.meta.dirname, '../..')
const BIN = path.join(ROOT, 'bin', 'tidings.js')
const MAIN = path.join(ROOT, 'src', 'main.ts')

/** Variables of the parent that must not leak into a child: its configuration is exactly what a test gives. */
const CONFIG_VARS = [
  'PORT',
  'HOST',
  'ROLE',
  'DATA_DIR',
  'DATABASE_URL',
  'DB_POOL_SIZE',
  'SMTP_URL',
  'PUBLIC_URL',
  'MAIL_FROM',
  'BOUNCE_SMTP_PORT',
  'DNS_SERVERS',
  'ALLOW_PRIVATE_NETWORK',
  'BOOTSTRAP_API_KEY',
  'ADMIN_KEY',
  'RATE_LIMIT_PER_MINUTE',
  'BODY_LIMIT_BYTES',
  'LOG_LEVEL',
  'SEND_THREADS',
  'SEND_LEASE_SECONDS',
  'SEND_CLAIM_LOCKS',
  'SMTP_CONNECTIONS',
  'RELAY_GIVE_UP_HOURS',
  'NODE_TEST_CONTEXT',
  'NODE_OPTIONS',
]

export function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env }
  for (const name of CONFIG_VARS) delete base[name]
  for (const [k, v] of Object.entries(env)) if (v !== undefined) base[k] = v
  return base
}

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

export interface CliResult extends Exit {
  stdout: string
  stderr: string
}

const running = new Set<ChildProcess>()

/** Stops, by PID, whatever this test file started and left running (a failed assertion mid-test). */
function killRunning(): void {
  for (const c of running) signal(c, 'SIGKILL')
}
after(killRunning)
process.once('exit', killRunning)
// The test runner ends a timed-out file with SIGTERM, which runs no `after` hook: no server may outlive it.
process.once('SIGTERM', () => {
  killRunning()
  process.exit(143)
})

function signal(child: ChildProcess, sig: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return
  try {
    process.kill(child.pid, sig)
  } catch {
    // exited meanwhile
  }
}

function track(child: ChildProcess): void {
  running.add(child)
  child.once('exit', () => running.delete(child))
}

/**
 * The child's exit, once its pipes are drained too: 'close', not 'exit', at which the pipes may still hold what
 * the child wrote last (a CLI run in CI once came back with its exit code and an empty stderr, its usage message
 * unread). Called right after spawn, so the event cannot have passed.
 */
function closed(child: ChildProcess): Promise<Exit> {
  return new Promise((resolve) =>
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => resolve({ code, signal })),
  )
}

/** Runs `node <argv>` in the repository to its exit; SIGKILL after timeoutMs. */
async function runToExit(argv: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<CliResult> {
  const child = spawn(process.execPath, argv, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
  })
  track(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()))
  const exit = await closed(child)
  return { ...exit, stdout, stderr }
}

/** `node bin/tidings.js <args>` (what `npx tidings` runs). */
export function runCli(
  args: string[],
  env: Record<string, string | undefined>,
  timeoutMs = 60_000,
): Promise<CliResult> {
  return runToExit([BIN, ...args], childEnv(env), timeoutMs)
}

/** `node --import tsx src/main.ts` run to its exit, for start-ups that must fail. */
export function runMain(env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<CliResult> {
  return runToExit(['--import', 'tsx', MAIN], childEnv({ HOST: '127.0.0.1', PORT: '0', ...env }), timeoutMs)
}

/** Runs fn over items, at most `limit` at a time (child processes are CPU-heavy on a small machine). */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  const lane = async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
  return out
}

export interface Installation {
  /** Environment for a child process: DATABASE_URL of a fresh PostgreSQL database, or a fresh DATA_DIR. */
  env: Record<string, string>
  dataDir: string
  /** PostgreSQL: the fresh database's URL; undefined on the embedded database. */
  databaseUrl: string | undefined
  /** Reads the installation's database in this process (the embedded one only while no server holds it). */
  withDb<T>(fn: (db: Db, accounts: AccountService) => Promise<T>): Promise<T>
  /** Applies the migrations in this process, as a server's first start would (without starting one). */
  migrate(): Promise<void>
}

/** A fresh installation for this test half (PostgreSQL database or DATA_DIR), removed after the calling suite. */
export async function freshInstallation(): Promise<Installation> {
  const dataDir = tempDataDir()
  if (testDbKind() === 'pglite') {
    return {
      env: { DATA_DIR: dataDir },
      dataDir,
      databaseUrl: undefined,
      async withDb(fn) {
        const handle = await openDatabase({ dataDir })
        try {
          return await fn(handle.db, createAccountService({ db: handle.db, clock: systemClock }))
        } finally {
          await handle.close()
        }
      },
      async migrate() {
        const handle = await openDatabase({ dataDir })
        try {
          await handle.migrate(MIGRATIONS_DIR)
        } finally {
          await handle.close()
        }
      },
    }
  }
  const testDb = await createTestDatabase()
  after(async () => {
    await testDb.handle.close()
    await testDb.drop()
  })
  const db = testDb.handle.db
  return {
    env: { DATABASE_URL: testDb.url!, DATA_DIR: dataDir },
    dataDir,
    databaseUrl: testDb.url,
    withDb: (fn) => fn(db, createAccountService({ db, clock: systemClock })),
    migrate: () => testDb.handle.migrate(MIGRATIONS_DIR),
  }
}

export interface ServerProcess {
  child: ChildProcess
  pid: number
  /** Base URL when the role listens; undefined for ROLE=worker. */
  url: string | undefined
  /** The `tidings started` log line. */
  started: Record<string, unknown>
  stdout(): string
  stderr(): string
  /** SIGTERM by PID and the exit, killed (SIGKILL) if it takes longer than timeoutMs. */
  stop(timeoutMs?: number): Promise<Exit>
  kill(): Promise<Exit>
  exited: Promise<Exit>
}

export interface SpawnedMain {
  child: ChildProcess
  stdout(): string
  stderr(): string
  exited: Promise<Exit>
}

/** How a test starts the server: the sources of what `npm start` runs, through tsx (no build needed). */
const FROM_SOURCES = ['--import', 'tsx', MAIN]

/**
 * `node --import tsx src/main.ts` (the sources of what `npm start` runs; `argv` replaces that), without waiting
 * for anything.
 */
export function spawnMain(env: Record<string, string | undefined>, argv = FROM_SOURCES): SpawnedMain {
  const child = spawn(process.execPath, argv, {
    cwd: ROOT,
    env: childEnv({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  track(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()))
  return { child, stdout: () => stdout, stderr: () => stderr, exited: closed(child) }
}

/** Sends a signal to a child by its PID (nothing when it has exited). */
export function signalChild(child: ChildProcess, sig: NodeJS.Signals): void {
  signal(child, sig)
}

/** spawnMain, resolved once the server logs `tidings started`. */
export async function startServerProcess(
  env: Record<string, string | undefined>,
  timeoutMs = 90_000,
  argv = FROM_SOURCES,
): Promise<ServerProcess> {
  const { child, stdout, stderr, exited } = spawnMain(env, argv)
  const started = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => {
      signal(child, 'SIGKILL')
      reject(new Error(`server did not start within ${timeoutMs} ms\n${stdout()}\n${stderr()}`))
    }, timeoutMs)
    const look = () => {
      const line = stdout()
        .split('\n')
        .find((l) => l.includes('"tidings started"'))
      if (!line) return
      clearTimeout(timer)
      child.stdout!.off('data', look)
      resolve(JSON.parse(line) as Record<string, unknown>)
    }
    child.stdout!.on('data', look)
    void exited.then((exit) => {
      clearTimeout(timer)
      reject(new Error(`server exited (${JSON.stringify(exit)}) before it started\n${stdout()}\n${stderr()}`))
    })
  })
  const stopWith = async (sig: NodeJS.Signals, ms: number): Promise<Exit> => {
    signal(child, sig)
    const timer = setTimeout(() => signal(child, 'SIGKILL'), ms)
    try {
      return await exited
    } finally {
      clearTimeout(timer)
    }
  }
  return {
    child,
    pid: child.pid!,
    url: typeof started.url === 'string' ? started.url : undefined,
    started,
    stdout,
    stderr,
    stop: (ms = 30_000) => stopWith('SIGTERM', ms),
    kill: () => stopWith('SIGKILL', 10_000),
    exited,
  }
}

/** A port nothing listens on right now (for checking that a role does not listen). */
/** JSON calls to a server process with an API key (bounded by a 10 s time-out each). */
export function keyedApi(serverUrl: string, key: string) {
  return async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${serverUrl}${url}`, {
      method,
      headers: { key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }
}

export { freePort } from '../../scripts/pg-cluster.js'

/** Whether something accepts TCP connections on 127.0.0.1:port (bounded by a 2 s time-out). */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    const done = (v: boolean) => {
      socket.destroy()
      resolve(v)
    }
    socket.setTimeout(2000, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

/** A temporary DATA_DIR, removed after the suite (or file) that asked for it. */
export function tempDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidings-e2e-'))
  after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** GET with a bounded time-out against 127.0.0.1. */
export async function httpGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown; type: string | null }> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) })
  const text = await res.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON
  }
  return { status: res.status, body, type: res.headers.get('content-type') }
}

// Where the process tests have always found it; it lives alone so a test that spawns nothing need not load this.
export { waitFor } from './wait-for.js'

/** A child's exit, or SIGKILL by PID and a rejection after timeoutMs. */
export async function exitWithin(spawned: SpawnedMain, timeoutMs: number): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      signal(spawned.child, 'SIGKILL')
      reject(new Error(`no exit within ${timeoutMs} ms\n${spawned.stdout()}\n${spawned.stderr()}`))
    }, timeoutMs)
  })
  try {
    return await Promise.race([spawned.exited, timeout])
  } finally {
    clearTimeout(timer)
  }
}
