import path from 'node:path'
import { type ChildProcess, spawn } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { sleep } from './random.js'
import { ADMIN_KEY, DATABASE_URL, KEY, PUBLIC_URL, ROOT } from './settings.js'

// The three server processes of a run (ROLE all, api, worker), their logs and their ends.

export interface Proc {
  name: string
  role: string
  port: number
  child: ChildProcess
  logFile: string
  exited?: { code: number | null; signal: NodeJS.Signals | null; at: number }
}

export function startProc(name: string, role: string, port: number, dir: string, sinkPort: number): Proc {
  const logFile = path.join(dir, `${name}.log`)
  const out = createWriteStream(logFile)
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    HOST: '127.0.0.1',
    ROLE: role,
    DATABASE_URL,
    DATA_DIR: path.join(dir, `data-${name}`),
    BOOTSTRAP_API_KEY: KEY,
    RATE_LIMIT_PER_MINUTE: '0',
    AUTH_FAILS_PER_MINUTE: '0',
    SMTP_URL: `smtp://127.0.0.1:${sinkPort}`,
    PUBLIC_URL,
    ALLOW_PRIVATE_NETWORK: '1',
    LOG_LEVEL: 'warn',
    ADMIN_KEY,
  }
  if (process.env.DB_POOL_SIZE) env.DB_POOL_SIZE = process.env.DB_POOL_SIZE
  const child = spawn(process.execPath, ['dist/main.js'], {
    env,
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout?.pipe(out, { end: false })
  child.stderr?.pipe(out, { end: false })
  const proc: Proc = { name, role, port, child, logFile }
  child.on('exit', (code, signal) => {
    proc.exited = { code, signal, at: Date.now() }
  })
  return proc
}

export async function waitHttp(port: number, proc: Proc, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (proc.exited)
      throw new Error(`${proc.name} exited: ${JSON.stringify(proc.exited)}; see ${proc.logFile}`)
    try {
      const r = await fetch(`http://127.0.0.1:${port}/lists`, {
        headers: { key: KEY },
        signal: AbortSignal.timeout(2000),
      })
      if (r.status === 200) return
    } catch {
      /* not yet */
    }
    await sleep(250)
  }
  throw new Error(`${proc.name} did not answer on ${port} within ${timeoutMs} ms`)
}

export async function stopProc(p: Proc) {
  if (p.exited || !p.child.pid) return
  const exited = new Promise<void>((r) => p.child.once('exit', () => r()))
  process.kill(p.child.pid, 'SIGTERM')
  const killTimer = setTimeout(() => {
    if (!p.exited && p.child.pid) {
      console.log(`  ${p.name} (pid ${p.child.pid}) did not stop in 10 s: SIGKILL`)
      process.kill(p.child.pid, 'SIGKILL')
    }
  }, 10_000)
  await exited
  clearTimeout(killTimer)
}
