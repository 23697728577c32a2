import { and, asc, count, eq, inArray, or, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { contacts, memberships, type ContactRow, type MembershipRow } from '../subscribers/index.js'

/** `query` as a LIKE prefix pattern: its own %, _ and \ match themselves. */
function prefixPattern(query: string): string {
  return `${query.replace(/[\\%_]/g, '\\$&')}%`
}

/**
 * An address, name, surname or phone that starts with `query`, case-insensitively, in this account only.
 * Each branch is written as the expression of its index (contacts_search_*_idx: the stored lower-cased email,
 * lower(name), lower(surname), lower(phone), all text_pattern_ops), so PostgreSQL answers with a BitmapOr of
 * index ranges. The phone branch is left out when the query holds a letter or an @, which no phone number
 * starts with: one index range fewer to read for nothing.
 */
function matching(accountId: number, query: string): SQL {
  const pattern = prefixPattern(query)
  const branches: SQL[] = [
    sql`${contacts.email} LIKE ${pattern.toLowerCase()}`,
    sql`lower(${contacts.name}) LIKE lower(${pattern})`,
    sql`lower(${contacts.surname}) LIKE lower(${pattern})`,
  ]
  if (!/[\p{L}@]/u.test(query)) branches.push(sql`lower(${contacts.phone}) LIKE lower(${pattern})`)
  return and(eq(contacts.accountId, accountId), or(...branches))!
}

/** One page of the matching contacts, by id. */
export async function searchContacts(
  ex: Executor,
  accountId: number,
  query: string,
  limit: number,
  offset: number,
): Promise<ContactRow[]> {
  return ex
    .select()
    .from(contacts)
    .where(matching(accountId, query))
    .orderBy(asc(contacts.id))
    .limit(limit)
    .offset(offset)
}

export async function countMatches(ex: Executor, accountId: number, query: string): Promise<number> {
  const [row] = await ex.select({ n: count() }).from(contacts).where(matching(accountId, query))
  return row?.n ?? 0
}

/** The memberships of these contacts (their own account's lists), by contact and list. */
export async function membershipsOfContacts(ex: Executor, contactIds: number[]): Promise<MembershipRow[]> {
  if (contactIds.length === 0) return []
  return ex
    .select()
    .from(memberships)
    .where(inArray(memberships.contactId, contactIds))
    .orderBy(asc(memberships.contactId), asc(memberships.listId))
}
