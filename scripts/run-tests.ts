/**
 * `npm test`: every test file twice, on PGlite and on a real PostgreSQL (design.md, Tests).
 * PostgreSQL: TEST_DATABASE_URL, else a server on 127.0.0.1:5432, else a throwaway cluster started here with
 * initdb/pg_ctl. Without any, the PGlite half still runs and the PostgreSQL half is reported as not run;
 * REQUIRE_POSTGRES=1 (CI) makes that a failure. Extra arguments select test files.
 */
// First: an older Node.js stops here with a clear message, before any module that needs a newer one loads.
import '../src/core/node-version.js'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { openDatabase, wrapPglite, type DbHandle } from '../src/core/db/client.js'
import { MIGRATIONS_DIR } from '../src/core/context.js'
import { createJobQueue } from '../src/core/jobs/queue.js'
import { jobQueues } from '../src/modules/index.js'
import { findOrStartPostgres, type Cluster } from './pg-cluster.js'

const root = path.resolve(import.meta.dirname, '..')
const tmp = path.join(root, '.tmp')
fs.mkdirSync(tmp, { recursive: true })

/** The test files named (a folder stands for every test file under it), or all of them. */
function findTestFiles(args: string[]): string[] {
  const out: string[] = []
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name.endsWith('.test.ts')) out.push(p)
    }
  }
  if (args.length === 0) {
    walk(path.join(root, 'src'))
    walk(path.join(root, 'test'))
  }
  for (const a of args) {
    const p = path.resolve(a)
    if (fs.existsSync(p) && fs.statSync(p).isDirectory()) walk(p)
    else out.push(p)
  }
  return out.sort()
}

async function installSchema(handle: DbHandle): Promise<void> {
  await handle.migrate(MIGRATIONS_DIR)
  const jobs = createJobQueue(handle, () => undefined)
  await jobs.start(jobQueues)
  await jobs.stop()
}

async function preparePgliteTemplate(): Promise<string> {
  const client = await PGlite.create()
  await installSchema(wrapPglite(client))
  const dump = await client.dumpDataDir('none')
  await client.close()
  const file = path.join(tmp, `pglite-template-${process.pid}.tar`)
  fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()))
  return file
}

async function preparePgTemplate(adminUrl: string): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `tidings_tpl_${process.pid}`
  const exec = async (q: string) => {
    const c = new pg.Client({ connectionString: adminUrl })
    await c.connect()
    try {
      await c.query(q)
    } finally {
      await c.end()
    }
  }
  await exec(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  await exec(`CREATE DATABASE ${name}`)
  const u = new URL(adminUrl)
  u.pathname = `/${name}`
  const handle = await openDatabase({ databaseUrl: u.toString(), poolSize: 2 })
  try {
    await installSchema(handle)
  } finally {
    await handle.close()
  }
  return { name, drop: () => exec(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

interface HalfResult {
  pass: number
  fail: number
  code: number
}

function runHalf(label: string, files: string[], env: Record<string, string>): Promise<HalfResult> {
  process.stdout.write(`\n=== ${label} ===\n`)
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--test',
        '--test-concurrency=2',
        // A hung test fails instead of holding the run. Per test and per file: the CLI and start-up files start
        // the server over a dozen times and took 157-163 s of tests (over 180 s in all) on a slow 2-core
        // machine, where a 180 s limit failed them with every test passing.
        '--test-timeout=600000',
        '--test-reporter=spec',
        ...files,
      ],
      { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
    )
    let out = ''
    child.stdout.on('data', (c: Buffer) => {
      process.stdout.write(c)
      out += c.toString()
      if (out.length > 200_000) out = out.slice(-20_000)
    })
    child.on('close', (code) => {
      const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0)
      const result = { pass: num(/ℹ pass (\d+)/), fail: num(/ℹ fail (\d+)/), code: code ?? 1 }
      // An error outside any test (an unhandled rejection after a file's tests ended) fails the run with
      // "fail 0" in node's summary; count it, so the total never reads green on a red run.
      if (result.code !== 0 && result.fail === 0) {
        process.stdout.write(
          `\n!!! ${label}: a test file failed outside its tests (see "failing tests" above)\n`,
        )
        result.fail = 1
      }
      // Files given but no test ran (a wrong path, a file that registers nothing): never a green run.
      if (result.pass === 0 && result.fail === 0 && !/ℹ skipped [1-9]/.test(out)) {
        process.stdout.write(`\n!!! ${label}: no test ran\n`)
        result.fail = 1
      }
      resolve(result)
    })
  })
}

async function main(): Promise<number> {
  const files = findTestFiles(process.argv.slice(2))
  if (files.length === 0) {
    process.stderr.write('no test files found\n')
    return 1
  }
  const requirePg = process.env.REQUIRE_POSTGRES === '1'
  const found = await findOrStartPostgres(process.env.TEST_DATABASE_URL)
  const cluster: Cluster | undefined = found.cluster
  const pgUrl = found.url
  const results: HalfResult[] = []
  try {
    const dump = await preparePgliteTemplate()
    try {
      results.push(await runHalf('PGlite', files, { TEST_DB: 'pglite', TEST_PGLITE_TEMPLATE: dump }))
    } finally {
      fs.rmSync(dump, { force: true })
    }
    if (pgUrl) {
      const tpl = await preparePgTemplate(pgUrl)
      try {
        results.push(
          await runHalf(`PostgreSQL (${new URL(pgUrl).host})`, files, {
            TEST_DB: 'postgres',
            TEST_DATABASE_URL: pgUrl,
            TEST_PG_TEMPLATE: tpl.name,
          }),
        )
      } finally {
        await tpl.drop().catch(() => undefined)
      }
    } else {
      process.stdout.write(
        '\n!!! PostgreSQL half NOT RUN: no TEST_DATABASE_URL, no server on 127.0.0.1:5432, no initdb to start one.\n' +
          '!!! Install PostgreSQL (apt-get install postgresql) to run every test on both databases.\n',
      )
      if (requirePg) results.push({ pass: 0, fail: 1, code: 1 })
    }
  } finally {
    cluster?.stop()
  }
  const pass = results.reduce((a, r) => a + r.pass, 0)
  const fail = results.reduce((a, r) => a + r.fail, 0)
  process.stdout.write(`\ntotal: ${pass} passed, ${fail} failed\n`)
  return results.every((r) => r.code === 0) && fail === 0 ? 0 : 1
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `test runner failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    )
    process.exit(1)
  },
)
