import { and, asc, eq, sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { contacts, memberships } from './subscribers.table.js'
import type { ContactRow, MembershipRow } from './subscribers.schemas.js'

/** One person with one of their memberships: what the "subscriber in a list" mapper takes. */
export interface MemberRow {
  c: ContactRow
  m: MembershipRow
}

/**
 * The member of `listId` whose phone, spaces removed, equals `phone` (given without spaces); the lowest contact id
 * wins when several do. The index contacts_phone_digits_idx on (account_id, replace(phone, ' ', '')) serves it.
 */
export async function findMemberByPhone(
  ex: Executor,
  accountId: number,
  listId: number,
  phone: string,
): Promise<MemberRow | undefined> {
  const [row] = await ex
    .select({ c: contacts, m: memberships })
    .from(contacts)
    .innerJoin(memberships, and(eq(memberships.contactId, contacts.id), eq(memberships.listId, listId)))
    .where(and(eq(contacts.accountId, accountId), sql`replace(${contacts.phone}, ' ', '') = ${phone}`))
    .orderBy(asc(contacts.id))
    .limit(1)
  return row
}

export async function findContactByEmail(
  ex: Executor,
  accountId: number,
  email: string,
): Promise<ContactRow | undefined> {
  const [row] = await ex
    .select()
    .from(contacts)
    .where(and(eq(contacts.accountId, accountId), eq(contacts.email, email)))
  return row
}

/** Every membership of one contact (all in the contact's account), by list id. */
export async function membershipsOf(ex: Executor, contactId: number): Promise<MembershipRow[]> {
  return ex
    .select()
    .from(memberships)
    .where(eq(memberships.contactId, contactId))
    .orderBy(asc(memberships.listId))
}
