import fs from 'node:fs'
import { randomBytes } from 'node:crypto'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { wrapPglite, openDatabase, type DbHandle } from '../../src/core/db/client.js'

/**
 * Fresh databases for one test file. scripts/run-tests.ts prepares a migrated template once per run
 * (a PGlite data-dir dump, and a PostgreSQL TEMPLATE database) and says where through the environment.
 */
export type TestDbKind = 'pglite' | 'postgres'

export function testDbKind(): TestDbKind {
  return process.env.TEST_DB === 'postgres' ? 'postgres' : 'pglite'
}

export interface TestDatabase {
  handle: DbHandle
  /** Connection URL for PostgreSQL (child processes can open it); undefined on PGlite. */
  url: string | undefined
  drop(): Promise<void>
}

export async function createTestDatabase(): Promise<TestDatabase> {
  return testDbKind() === 'postgres' ? createPostgresDatabase() : createPgliteDatabase()
}

async function createPgliteDatabase(): Promise<TestDatabase> {
  const dump = process.env.TEST_PGLITE_TEMPLATE
  const client =
    dump && fs.existsSync(dump)
      ? await PGlite.create({ loadDataDir: new Blob([fs.readFileSync(dump)]) })
      : await PGlite.create()
  const handle = wrapPglite(client)
  return { handle, url: undefined, drop: async () => undefined }
}

export function adminUrl(): string {
  const url = process.env.TEST_DATABASE_URL
  if (!url) throw new Error('TEST_DB=postgres needs TEST_DATABASE_URL (npm test sets it)')
  return url
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

async function createPostgresDatabase(): Promise<TestDatabase> {
  const base = adminUrl()
  const template = process.env.TEST_PG_TEMPLATE
  const name = `tidings_t_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: base })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`)
  } finally {
    await admin.end()
  }
  const url = withDatabase(base, name)
  const handle = await openDatabase({ databaseUrl: url, poolSize: 10 })
  return {
    handle,
    url,
    async drop() {
      const a = new pg.Client({ connectionString: base })
      await a.connect()
      try {
        await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await a.end()
      }
    },
  }
}
