import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'
import { trackerEvents } from './tracker-events.table.js'

/** The contact of `email` when it is in at least one of the account's lists (any status), else undefined. */
export async function findSubscriberId(
  ex: Executor,
  accountId: number,
  email: string,
): Promise<number | undefined> {
  const row = await queryOne<{ id: number }>(
    ex,
    sql`SELECT c.id FROM contacts c
        WHERE c.account_id = ${accountId}::int AND c.email = ${email}
          AND EXISTS (SELECT 1 FROM memberships m WHERE m.contact_id = c.id)`,
  )
  return row?.id
}

export type NewTrackerEvent = Omit<typeof trackerEvents.$inferInsert, 'id'>
export type TrackerEventRow = typeof trackerEvents.$inferSelect

/** Side effect: stores one tracker event. */
export async function insertTrackerEvent(ex: Executor, values: NewTrackerEvent): Promise<TrackerEventRow> {
  const [row] = await ex.insert(trackerEvents).values(values).returning()
  return row!
}
