import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryRows } from '../../core/db/sql.js'
import { redirectTarget } from '../../core/http/redirect-target.js'
import { lists } from './lists.table.js'
import type { ListCountsT, ListRow } from './lists.schemas.js'

export type NewList = Omit<typeof lists.$inferInsert, 'id' | 'accountId'>

export async function insertList(
  ex: Executor,
  accountId: number,
  values: NewList & { name: string },
): Promise<ListRow> {
  const [row] = await ex
    .insert(lists)
    .values({ ...values, accountId })
    .returning()
  return row!
}

export async function listLists(ex: Executor, accountId: number): Promise<ListRow[]> {
  return ex.select().from(lists).where(eq(lists.accountId, accountId)).orderBy(asc(lists.id))
}

/** Which of `ids` are lists of this account (targets and conditions may name only the account's lists). */
export async function ownListIds(ex: Executor, accountId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set()
  const rows = await ex
    .select({ id: lists.id })
    .from(lists)
    .where(and(eq(lists.accountId, accountId), inArray(lists.id, ids)))
  return new Set(rows.map((r) => r.id))
}

/** The sender fields of the account's lists among `ids` (a campaign without its own sender uses them). */
export async function listSenders(
  ex: Executor,
  accountId: number,
  ids: number[],
): Promise<Pick<ListRow, 'id' | 'fromName' | 'fromEmail' | 'replyTo'>[]> {
  if (ids.length === 0) return []
  return ex
    .select({ id: lists.id, fromName: lists.fromName, fromEmail: lists.fromEmail, replyTo: lists.replyTo })
    .from(lists)
    .where(and(eq(lists.accountId, accountId), inArray(lists.id, ids)))
}

export async function findList(
  ex: Executor,
  accountId: number,
  listId: number,
): Promise<ListRow | undefined> {
  const [row] = await ex
    .select()
    .from(lists)
    .where(and(eq(lists.id, listId), eq(lists.accountId, accountId)))
  return row
}

export async function updateList(
  ex: Executor,
  accountId: number,
  listId: number,
  values: Partial<NewList>,
  now: Date,
): Promise<ListRow | undefined> {
  const [row] = await ex
    .update(lists)
    .set({ ...values, updatedAt: now })
    .where(and(eq(lists.id, listId), eq(lists.accountId, accountId)))
    .returning()
  return row
}

/** Deletes the list; its memberships go with it (ON DELETE CASCADE), the contacts stay. */
export async function deleteList(ex: Executor, accountId: number, listId: number): Promise<boolean> {
  const rows = await ex
    .delete(lists)
    .where(and(eq(lists.id, listId), eq(lists.accountId, accountId)))
    .returning({ id: lists.id })
  return rows.length > 0
}

/** Subscribers of a list by status; soft_bounced counts subscribed contacts that have soft bounces. */
export async function countByStatus(ex: Executor, listId: number): Promise<ListCountsT> {
  const rows = await queryRows<{ status: number; n: number; soft: number }>(
    ex,
    sql`SELECT m.status::int AS status, count(*)::int AS n,
               count(*) FILTER (WHERE c.bounce_soft > 0)::int AS soft
        FROM memberships m JOIN contacts c ON c.id = m.contact_id
        WHERE m.list_id = ${listId}
        GROUP BY m.status`,
  )
  const by = (s: number) => rows.find((r) => r.status === s)
  return {
    subscribed: by(1)?.n ?? 0,
    unsubscribed: by(2)?.n ?? 0,
    soft_bounced: by(1)?.soft ?? 0,
    hard_bounced: by(4)?.n ?? 0,
    complained: by(5)?.n ?? 0,
    unconfirmed: by(6)?.n ?? 0,
  }
}

/**
 * The page a person goes to after unsubscribing through the unsubscribe page: the `unsub_page` of the first of
 * these lists (in the order given) that has an http(s) one, with `email` for its `*|EMAIL|*`; null when none does.
 */
export async function findUnsubscribePage(
  ex: Executor,
  accountId: number,
  listIds: readonly number[],
  email: string,
): Promise<string | null> {
  if (listIds.length === 0) return null
  const rows = await ex
    .select({ id: lists.id, page: lists.unsubPage })
    .from(lists)
    .where(and(eq(lists.accountId, accountId), inArray(lists.id, [...listIds])))
  const pages = new Map(rows.map((r) => [r.id, r.page]))
  for (const id of listIds) {
    const target = redirectTarget(pages.get(id), email)
    if (target) return target
  }
  return null
}
