import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
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
  const where = sql`contact_id = ${contact.id}
    ${filter.category ? sql`AND category = ${filter.category}` : sql``}
    ${filter.action ? sql`AND action = ${filter.action}` : sql``}`
  const rows = await queryRows<{
    id: string | number
    category: string
    action: string
    label: string
    property: string
    value: string
    created_at: string | Date
  }>(
    ex,
    sql`SELECT id, category, action, label, property, value, created_at FROM tracker_events
        WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
  )
  const count = await queryOne<{ n: number }>(
    ex,
    sql`SELECT count(*)::int AS n FROM tracker_events WHERE ${where}`,
  )
  return {
    known: true,
    rows: rows.map((r) => ({
      id: Number(r.id),
      accountId,
      contactId: contact.id,
      category: r.category,
      action: r.action,
      label: r.label,
      property: r.property,
      value: r.value,
      createdAt: new Date(r.created_at),
    })),
    total: count?.n ?? 0,
  }
}
