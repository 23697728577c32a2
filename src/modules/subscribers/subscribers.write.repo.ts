import { and, eq, ne, sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { erasedReason } from './erased-suppressions.repo.js'
import type { ContactFields } from './subscriber-fields.validation.js'
import type { ContactRow, MembershipRow } from './subscribers.schemas.js'
import { contacts, memberships } from './subscribers.table.js'

/** Single-subscriber writes: subscribe, update-subscriber, unsubscribe. Set-based ones: subscribe-bulk.repo.ts, bulk-update.repo.ts */

type ContactInsert = typeof contacts.$inferInsert

export interface Member {
  contact: ContactRow
  membership: MembershipRow
}

/** Contact columns of the given fields (absent ones stay out, so they keep their stored or default value). */
function contactColumns(fields: ContactFields): Partial<ContactInsert> {
  const { customFields, ...plain } = fields
  return { ...plainColumns(plain), ...(customFields !== undefined ? { customFields } : {}) }
}

/** Field rules name fields as the wire does; `vokativ_s` is the one whose table property is spelled otherwise. */
function plainColumns<T extends { vokativ_s?: string }>(
  fields: T,
): Omit<T, 'vokativ_s'> & { vokativS?: string } {
  const { vokativ_s, ...rest } = fields
  return vokativ_s === undefined ? rest : { ...rest, vokativS: vokativ_s }
}

/**
 * Tags given replace the stored ones, as the bulk update's do (api.md: "the given content overwrites the current
 * tags") and as Ecomail's own shop plugins expect: WooCommerce's reads a customer's tags, merges its own and
 * drops its newsletter tag for one who did not opt in, which only works if the list sent is the list kept. They
 * come deduplicated, in order (checkTags), and travel as JSON so the array is one parameter on every driver.
 */
const givenTags = (tags: string[]) =>
  sql`ARRAY(SELECT t FROM jsonb_array_elements_text(${JSON.stringify(tags)}::jsonb) WITH ORDINALITY AS u(t, o) ORDER BY o)`

/**
 * Creates the contact, or (on its address) takes the existing one and, when `updateExisting`, writes the
 * fields given: tags replaced, custom fields and groups merged key by key, other fields overwritten.
 * A new contact whose address was erased while suppressed (`addressHash`, erased-suppressions.ts) is created
 * suppressed again; the caller then forgets the remembered row (forgetErased).
 * ON CONFLICT makes two simultaneous subscribes of one new address meet on one row instead of failing, and
 * it row-locks the contact until commit, so concurrent subscribes of one person run one after the other.
 */
export async function upsertContact(
  ex: Executor,
  accountId: number,
  email: string,
  fields: ContactFields,
  updateExisting: boolean,
  addressHash: string,
  now: Date,
): Promise<ContactRow> {
  const set: Record<string, unknown> = { updatedAt: sql`${contacts.updatedAt}` }
  if (updateExisting) {
    const { tags, customFields, groups, ...plain } = fields
    Object.assign(set, plainColumns(plain), { updatedAt: now })
    if (tags !== undefined) set.tags = givenTags(tags)
    if (customFields !== undefined)
      set.customFields = sql`${contacts.customFields} || ${JSON.stringify(customFields)}::jsonb`
    if (groups !== undefined) set.groups = sql`${contacts.groups} || ${JSON.stringify(groups)}::jsonb`
  }
  const [row] = await ex
    .insert(contacts)
    .values({
      ...contactColumns(fields),
      accountId,
      email,
      suppressed: erasedReason(accountId, addressHash),
      insertedAt: now,
      updatedAt: now,
    })
    .onConflictDoUpdate({ target: [contacts.accountId, contacts.email], set })
    .returning()
  return row!
}

/** The tags of the account's contact with this address ([] when there is none). */
export async function tagsOf(ex: Executor, accountId: number, email: string): Promise<string[]> {
  const [row] = await ex
    .select({ tags: contacts.tags })
    .from(contacts)
    .where(and(eq(contacts.accountId, accountId), eq(contacts.email, email)))
  return row?.tags ?? []
}

export async function lockMembership(
  ex: Executor,
  listId: number,
  contactId: number,
): Promise<MembershipRow | undefined> {
  const [row] = await ex
    .select()
    .from(memberships)
    .where(and(eq(memberships.listId, listId), eq(memberships.contactId, contactId)))
    .for('update')
  return row
}

export interface MembershipValues {
  accountId: number
  listId: number
  contactId: number
  status: number
  source: string
  now: Date
}

/** A new membership; on a race with another writer of the same pair, this request's outcome wins. */
export async function insertMembership(ex: Executor, v: MembershipValues): Promise<MembershipRow> {
  const values = {
    accountId: v.accountId,
    listId: v.listId,
    contactId: v.contactId,
    status: v.status,
    source: v.source,
    subscribedAt: v.now,
    unsubscribedAt: v.status === 2 ? v.now : null,
    updatedAt: v.now,
  }
  const [row] = await ex
    .insert(memberships)
    .values(values)
    .onConflictDoUpdate({
      target: [memberships.listId, memberships.contactId],
      set: { status: values.status, unsubscribedAt: values.unsubscribedAt, updatedAt: v.now },
    })
    .returning()
  return row!
}

export async function updateMembership(
  ex: Executor,
  id: number,
  set: Partial<Pick<MembershipRow, 'status' | 'subscribedAt' | 'unsubscribedAt'>>,
  now: Date,
): Promise<MembershipRow> {
  const [row] = await ex
    .update(memberships)
    .set({ ...set, updatedAt: now })
    .where(eq(memberships.id, id))
    .returning()
  return row!
}

export async function clearSuppression(ex: Executor, contactId: number, now: Date): Promise<ContactRow> {
  const [row] = await ex
    .update(contacts)
    .set({ suppressed: null, updatedAt: now })
    .where(eq(contacts.id, contactId))
    .returning()
  return row!
}

/**
 * The person with this address in this list of the account, the contact row-locked when `lock` (a write
 * follows, which locks the membership as it updates it). Only the contact: every other writer takes the contact
 * first and then its memberships (subscribe's upsert, the bulk statements, erasure's cascade), and a lock on both
 * rows here took the membership first, a deadlock with them that came back under load past the retries (500s).
 */
export async function findMember(
  ex: Executor,
  accountId: number,
  listId: number,
  email: string,
  lock = false,
): Promise<Member | undefined> {
  const q = ex
    .select({ contact: contacts, membership: memberships })
    .from(memberships)
    .innerJoin(contacts, eq(contacts.id, memberships.contactId))
    .where(and(eq(contacts.accountId, accountId), eq(contacts.email, email), eq(memberships.listId, listId)))
  const [row] = lock ? await q.for('update', { of: contacts }) : await q
  return row
}

export async function emailTaken(
  ex: Executor,
  accountId: number,
  email: string,
  exceptContactId: number,
): Promise<boolean> {
  const rows = await ex
    .select({ id: contacts.id })
    .from(contacts)
    .where(
      and(eq(contacts.accountId, accountId), eq(contacts.email, email), ne(contacts.id, exceptContactId)),
    )
  return rows.length > 0
}

/** Moves the person to another address (unique per account: a concurrent taker makes this throw 23505). */
export async function changeEmail(ex: Executor, contactId: number, email: string, now: Date): Promise<void> {
  await ex.update(contacts).set({ email, updatedAt: now }).where(eq(contacts.id, contactId))
}

/**
 * Sets the membership to unsubscribed. Idempotent: a membership already at 2 keeps its unsubscribed_at.
 * Side effect: the membership row is written. Undefined when the row is gone: its list was deleted after
 * findMember found it (the delete's cascade takes no lock on the contact that findMember holds).
 */
export async function unsubscribeMembership(
  ex: Executor,
  id: number,
  now: Date,
): Promise<MembershipRow | undefined> {
  const [row] = await ex
    .update(memberships)
    .set({
      status: 2,
      unsubscribedAt: sql`CASE WHEN ${memberships.status} = 2 THEN coalesce(${memberships.unsubscribedAt}, ${now.toISOString()}::timestamptz)
                               ELSE ${now.toISOString()}::timestamptz END`,
      updatedAt: now,
    })
    .where(eq(memberships.id, id))
    .returning()
  return row
}
