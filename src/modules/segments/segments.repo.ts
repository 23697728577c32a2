import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'
import type { Condition } from './condition.js'
import { conditionSql } from './condition.sql.js'
import { segments } from './segments.table.js'

export type SegmentRow = typeof segments.$inferSelect

export async function insertSegment(
  ex: Executor,
  values: Omit<typeof segments.$inferInsert, 'filter'> & { filter: Condition },
): Promise<SegmentRow> {
  const [row] = await ex.insert(segments).values(values).returning()
  return row!
}

export async function listSegments(ex: Executor, accountId: number, listId: number): Promise<SegmentRow[]> {
  return ex
    .select()
    .from(segments)
    .where(and(eq(segments.accountId, accountId), eq(segments.listId, listId)))
    .orderBy(asc(segments.createdAt), asc(segments.id))
}

/** Segments of the account among `ids`; ids of other accounts or unknown ones are simply absent. */
export async function findSegmentRows(ex: Executor, accountId: number, ids: string[]): Promise<SegmentRow[]> {
  if (ids.length === 0) return []
  return ex
    .select()
    .from(segments)
    .where(and(eq(segments.accountId, accountId), inArray(segments.id, ids)))
}

/**
 * How many status-1 members of the list match each condition, in one pass over the list's members
 * (one `count(*) FILTER` per condition).
 */
export async function countMatches(
  ex: Executor,
  accountId: number,
  listId: number,
  conds: Condition[],
  now: Date,
): Promise<number[]> {
  if (conds.length === 0) return []
  const counts = conds.map(
    (c, i) =>
      sql`count(*) FILTER (WHERE ${conditionSql(c, { accountId, now })})::int AS ${sql.identifier(`n${i}`)}`,
  )
  const row = await queryOne<Record<string, number>>(
    ex,
    sql`SELECT ${sql.join(counts, sql`, `)}
        FROM memberships m JOIN contacts c ON c.id = m.contact_id
        WHERE m.account_id = ${accountId}::int AND m.list_id = ${listId}::int AND m.status = 1`,
  )
  return conds.map((_, i) => row?.[`n${i}`] ?? 0)
}
