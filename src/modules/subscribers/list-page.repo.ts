import { and, count, eq, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryRows } from '../../core/db/sql.js'
import { memberships } from './subscribers.table.js'

/**
 * What one "subscriber entry in a list page" needs, already in wire form: times as their ISO strings, the JSON
 * columns as JSON text. list-page.json.ts writes the entries from these without building objects.
 */
export interface ListPageRow {
  membership_id: number
  list_id: number
  status: number
  subscribed_at: string
  unsubscribed_at: string | null
  source: string
  custom_fields: string
  groups: string
  id: number
  email: string
  name: string
  surname: string
  gender: string
  company: string | null
  city: string
  country: string
  phone: string | null
}

/** `2026-01-02T03:04:05.123000Z`, exactly what isoMicro() writes for the JS Date of the same value. */
const isoMicro = (column: SQL) =>
  sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"000Z"')`

/**
 * One page of a list's members with one status, in membership-id order: the API's largest read (up to 5,000
 * rows a call). The page's ids come from memberships_list_status_idx alone (an index-only walk, however deep the
 * offset); only those rows are then fetched and joined to their contacts, by primary key and already in order.
 */
export async function listPageRows(
  ex: Executor,
  listId: number,
  status: number,
  limit: number,
  offset: number,
): Promise<ListPageRow[]> {
  return queryRows<ListPageRow>(
    ex,
    sql`SELECT m.id AS membership_id, m.list_id, m.status,
               ${isoMicro(sql`m.subscribed_at`)} AS subscribed_at,
               ${isoMicro(sql`m.unsubscribed_at`)} AS unsubscribed_at,
               m.source, c.custom_fields::text AS custom_fields, c.groups::text AS groups,
               c.id, c.email, c.name, c.surname, c.gender, c.company, c.city, c.country, c.phone
        FROM memberships m
        JOIN contacts c ON c.id = m.contact_id
        WHERE m.id = ANY(ARRAY(
          SELECT id FROM memberships
          WHERE list_id = ${listId} AND status = ${status}
          ORDER BY id LIMIT ${limit} OFFSET ${offset}))
        ORDER BY m.id`,
  )
}

export async function countListMembers(ex: Executor, listId: number, status: number): Promise<number> {
  const [row] = await ex
    .select({ n: count() })
    .from(memberships)
    .where(and(eq(memberships.listId, listId), eq(memberships.status, status)))
  return row?.n ?? 0
}
