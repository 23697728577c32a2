import { sql, type SQL } from 'drizzle-orm'
import type { Executor } from './client.js'

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
