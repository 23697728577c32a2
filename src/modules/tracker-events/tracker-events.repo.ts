import { and, count, desc, eq, sql } from 'drizzle-orm'
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

/**
 * One address's events in the account, newest first, of one category and action when given ('' or undefined:
 * any). `known` is false when the account has no contact of that address (the caller answers 404). The contact
 * index finds the person's events and they are sorted here: cheap for the events a person has, though a site
 * that reports every page view would want an index on (contact_id, created_at) for it.
 */
export async function subscriberEventsPage(
  ex: Executor,
  accountId: number,
  email: string,
  filter: { category?: string; action?: string },
  limit: number,
  offset: number,
): Promise<{ known: boolean; rows: TrackerEventRow[]; total: number }> {
  const contact = await queryOne<{ id: number }>(
    ex,
    sql`SELECT id FROM contacts WHERE account_id = ${accountId}::int AND email = ${email}`,
  )
  if (!contact) return { known: false, rows: [], total: 0 }
  const where = and(
    eq(trackerEvents.contactId, contact.id),
    filter.category ? eq(trackerEvents.category, filter.category) : undefined,
    filter.action ? eq(trackerEvents.action, filter.action) : undefined,
  )
  const [rows, [counted]] = await Promise.all([
    ex
      .select()
      .from(trackerEvents)
      .where(where)
      .orderBy(desc(trackerEvents.createdAt), desc(trackerEvents.id))
      .limit(limit)
      .offset(offset),
    ex.select({ n: count() }).from(trackerEvents).where(where),
  ])
  return { known: true, rows, total: counted?.n ?? 0 }
}
