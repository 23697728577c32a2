/** Finding or starting a PostgreSQL server for tests and benchmarks (never a remote one). */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'

export async function canConnect(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  try {
    await c.connect()
    await c.query('SELECT 1')
    return true
  } catch {
    return false
  } finally {
    await c.end().catch(() => undefined)
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
    s.on('error', reject)
  })
}

function findPgBin(name: string): string | undefined {
  const which = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim()
  if (which) return which
  const base = '/usr/lib/postgresql'
  if (!fs.existsSync(base)) return undefined
  const versions = fs.readdirSync(base).sort((a, b) => Number(b) - Number(a))
  for (const v of versions) {
    const p = path.join(base, v, 'bin', name)
    if (fs.existsSync(p)) return p
  }
  return undefined
}

export interface Cluster {
  url: string
  stop(): void
}

/** A throwaway cluster in a temp dir, as user postgres when running as root (initdb refuses root). */
export async function startCluster(): Promise<Cluster | undefined> {
  const initdb = findPgBin('initdb')
  const pgCtl = findPgBin('pg_ctl')
  if (!initdb || !pgCtl) return undefined
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidings-pg-'))
  const asRoot = process.getuid?.() === 0
  const run = (cmd: string, args: string[]) => {
    const r = asRoot
      ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' })
      : spawnSync(cmd, args, { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout}`)
  }
  if (asRoot) spawnSync('chown', ['postgres', dir])
  const port = await freePort()
  const data = path.join(dir, 'data')
  run(initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-instructions'])
  run(pgCtl, [
    '-D',
    data,
    '-l',
    path.join(dir, 'log'),
    '-w',
    '-t',
    '60',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
    'start',
  ])
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run(pgCtl, ['-D', data, '-m', 'immediate', 'stop'])
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}

export const LOCAL_SERVER_URL = 'postgres://postgres@127.0.0.1:5432/postgres'

/** A server URL: the given one, else the local server on 5432, else a throwaway cluster (stop it when done). */
export async function findOrStartPostgres(
  given: string | undefined,
): Promise<{ url: string | undefined; cluster?: Cluster }> {
  if (given) return { url: given }
  if (await canConnect(LOCAL_SERVER_URL)) return { url: LOCAL_SERVER_URL }
  const cluster = await startCluster().catch((err: unknown) => {
    process.stderr.write(`could not start a PostgreSQL cluster: ${String(err)}\n`)
    return undefined
  })
  return cluster ? { url: cluster.url, cluster } : { url: undefined }
}
