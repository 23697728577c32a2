import { sql, type SQL } from 'drizzle-orm'
import { createHash } from 'node:crypto'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { DbHandle, Executor } from './client.js'

/** Runs a raw statement and returns its rows typed as the caller states (the SQL is the contract). */
export async function queryRows<T>(ex: Executor, query: SQL): Promise<T[]> {
  const result = (await ex.execute(query)) as unknown as { rows: T[] }
  return result.rows
}

export async function queryOne<T>(ex: Executor, query: SQL): Promise<T | undefined> {
  return (await queryRows<T>(ex, query))[0]
}

/**
 * Turns "$1 … $n" text plus values into a drizzle SQL object, so code that speaks positional SQL (pg-boss)
 * can run inside a drizzle transaction.
 */
export function positionalSql(text: string, values: unknown[] = []): SQL {
  const parts = text.split(/\$(\d+)/)
  const chunks: SQL[] = []
  parts.forEach((part, i) => {
    if (i % 2 === 0) chunks.push(sql.raw(part))
    // drizzle drops an undefined chunk, leaving a bare `::int`; pg itself sends undefined as NULL, so do we.
    else chunks.push(sql`${values[Number(part) - 1] ?? null}`)
  })
  return sql.join(chunks)
}

const dialect = new PgDialect()

/**
 * Runs a statement as a named prepared statement (PostgreSQL plans it once per connection, not on every
 * call): for the hottest statements, whose planning costs more than their execution. The name is a hash of
 * the text, so two statements never share a name. Outside any transaction only (it takes its own connection).
 */
export async function queryPrepared<T>(handle: DbHandle, query: SQL): Promise<T[]> {
  const { sql: text, params } = dialect.sqlToQuery(query)
  const name = `p_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`
  return (await handle.prepared(name, text, params)).rows as T[]
}

/** A database handle rather than a drizzle executor (a pool or a transaction), which has neither method. */
function isHandle(on: Executor | DbHandle): on is DbHandle {
  return 'prepared' in on && 'migrate' in on
}

/**
 * Runs a statement prepared (queryPrepared) when given the handle, that is outside any transaction, and as a
 * plain statement inside one: for repo functions called both ways.
 */
export function queryRowsOn<T>(on: Executor | DbHandle, query: SQL): Promise<T[]> {
  return isHandle(on) ? queryPrepared<T>(on, query) : queryRows<T>(on, query)
}
