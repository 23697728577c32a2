import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { freePort } from '../../scripts/pg-cluster.js'
import { buildDist } from '../../scripts/build.js'

const root = path.resolve(import.meta.dirname, '../..')

export interface ServerProcess {
  url: string
  key: string
  pid: number
  /** PostgreSQL: the bench's own database (its backends name it in their command line). */
  dbName?: string
  /** PostgreSQL: where that database is, for a bench that reads what the server wrote. */
  databaseUrl?: string
  stop(): Promise<void>
}

export type BenchDb = 'postgres' | 'pglite'

async function adminQuery(url: string, q: string): Promise<void> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    await c.query(q)
  } finally {
    await c.end()
  }
}

/** BENCH_START_SECONDS: how long a server may take to answer /health (default 60; more on a busy machine). */
const startTimeoutMs = Number(process.env.BENCH_START_SECONDS ?? 60) * 1000

async function waitHealthy(url: string, child: ChildProcess, timeoutMs = startTimeoutMs): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`)
    try {
      const r = await fetch(`${url}/health`)
      if (r.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error('server did not become healthy in time')
}

let built: Promise<unknown> | undefined

/**
 * BENCH_NODE_ARGS adds node flags to every server process, the worker of processes apart included (e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it).
 */
const benchNodeArgs = () => (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)

/** Ends a server process of the bench (SIGTERM, SIGKILL after 15 s) and removes its data directory. */
async function stopChild(child: ChildProcess, dataDir: string): Promise<void> {
  if (child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGTERM')
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))])
    if (child.exitCode === null) child.kill('SIGKILL')
  }
  fs.rmSync(dataDir, { recursive: true, force: true })
}

/**
 * Starts what `npm start` runs (the compiled dist/main.js, built once per bench run from the current sources) as
 * a child process on a fresh database, bound to 127.0.0.1.
 */
export async function startServerProcess(
  db: BenchDb,
  pgServerUrl: string | undefined,
  extraEnv: Record<string, string> = {},
): Promise<ServerProcess> {
  const port = await freePort()
  const key = `bench-${Date.now()}-${Math.random().toString(36).slice(2)}-key-0123456789abcdef`
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidings-bench-'))
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    BOOTSTRAP_API_KEY: key,
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
    ...extraEnv,
  }
  let dbName: string | undefined
  if (db === 'postgres') {
    if (!pgServerUrl) throw new Error('no PostgreSQL server for the benchmark')
    dbName = `tidings_bench_${process.pid}_${port}`
    await adminQuery(pgServerUrl, `CREATE DATABASE ${dbName}`)
    const u = new URL(pgServerUrl)
    u.pathname = `/${dbName}`
    env.DATABASE_URL = u.toString()
    env.DB_POOL_SIZE ??= '20'
  } else {
    delete env.DATABASE_URL
  }
  await (built ??= buildDist())
  // BENCH_SERVER_LOG=<file> keeps the server's log (appended), to see why a run stalled.
  const logFile = process.env.BENCH_SERVER_LOG
  const stdout = logFile ? fs.openSync(logFile, 'a') : 'ignore'
  const child = spawn(process.execPath, [...benchNodeArgs(), 'dist/main.js'], {
    cwd: root,
    env,
    stdio: ['ignore', stdout, 'inherit'],
  })
  if (typeof stdout === 'number') fs.closeSync(stdout)
  const url = `http://127.0.0.1:${port}`
  try {
    await waitHealthy(url, child)
  } catch (err) {
    child.kill('SIGKILL')
    throw err
  }
  return {
    url,
    key,
    pid: child.pid!,
    ...(dbName ? { dbName, databaseUrl: env.DATABASE_URL } : {}),
    async stop() {
      await stopChild(child, dataDir)
      if (dbName && pgServerUrl)
        await adminQuery(pgServerUrl, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
    },
  }
}

/** What a process logs once it runs what its ROLE asks for (server.ts), at info. */
const STARTED_LINE = '"msg":"tidings started"'

/**
 * Starts a ROLE=worker process of `api`'s installation (its PostgreSQL database), with `extraEnv` (the relay and
 * DNS the API process was given); resolves once the worker logs that it started (no port to ask).
 */
export async function startWorkerProcess(
  api: ServerProcess,
  extraEnv: Record<string, string> = {},
): Promise<{ pid: number; stop(): Promise<void> }> {
  if (!api.databaseUrl) throw new Error('a worker process of its own needs PostgreSQL')
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidings-bench-worker-'))
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    ROLE: 'worker',
    DATABASE_URL: api.databaseUrl,
    DB_POOL_SIZE: process.env.DB_POOL_SIZE ?? '20',
    DATA_DIR: dataDir,
    PUBLIC_URL: api.url,
    // Info, to see the start line; nothing else of the worker is logged at info per message.
    LOG_LEVEL: 'info',
    ...extraEnv,
  }
  const child = spawn(process.execPath, [...benchNodeArgs(), 'dist/main.js'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const stop = () => stopChild(child, dataDir)
  let seen = ''
  const started = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the worker did not start in time')), startTimeoutMs)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`the worker exited with ${code}`))
    })
    child.stdout.on('data', (chunk: Buffer) => {
      // Read on after the line too, so the worker never blocks on a full pipe.
      if (seen.length > 65_536) return
      seen += chunk.toString()
      if (seen.includes(STARTED_LINE)) {
        clearTimeout(timer)
        resolve()
      }
    })
  })
  try {
    await started
  } catch (err) {
    await stop()
    throw err
  }
  return { pid: child.pid!, stop }
}

/** The same Fastify, one route, no database: the ceiling a route of ours is compared with. */
export async function startBareFastify(): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort()
  const code = `
    const Fastify = (await import('fastify')).default
    const app = Fastify()
    app.get('/bare/:email', async (req) => ({ subscriber: { email: req.params.email, status: 1 } }))
    await app.listen({ port: ${port}, host: '127.0.0.1' })
  `
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: root, stdio: 'ignore' })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    try {
      await fetch(`${url}/bare/x`)
      break
    } catch {
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  return {
    url,
    async stop() {
      child.kill('SIGTERM')
    },
  }
}
