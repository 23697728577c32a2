import { and, eq, sql } from 'drizzle-orm'
import type { TestApp } from '../../../test/helpers/app.js'
import { queryOne } from '../../core/db/sql.js'
import { contacts, memberships } from './subscribers.table.js'

/** Direct reads of the stored state, so the write tests do not depend on the read endpoints. */

export const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/
export const ISO_MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

export async function contactOf(t: TestApp, email: string, accountId = t.account.id) {
  const [row] = await t.ctx.db
    .select()
    .from(contacts)
    .where(and(eq(contacts.accountId, accountId), eq(contacts.email, email)))
  return row
}

export async function memberOf(t: TestApp, listId: number, email: string) {
  const [row] = await t.ctx.db
    .select({ membership: memberships })
    .from(memberships)
    .innerJoin(contacts, eq(contacts.id, memberships.contactId))
    .where(and(eq(memberships.listId, listId), eq(contacts.email, email)))
  return row?.membership
}

export async function countMembers(t: TestApp, listId: number): Promise<number> {
  const row = await queryOne<{ n: number }>(
    t.ctx.db,
    sql`SELECT count(*)::int AS n FROM memberships WHERE list_id = ${listId}`,
  )
  return row?.n ?? 0
}

/** Account-wide suppression, as the bounce handling will set it. */
export async function suppress(t: TestApp, email: string, kind: 'hard_bounce' | 'complaint') {
  await t.ctx.db
    .update(contacts)
    .set({ suppressed: kind })
    .where(and(eq(contacts.accountId, t.account.id), eq(contacts.email, email)))
}

export async function setStatus(t: TestApp, listId: number, email: string, status: number) {
  const contact = await contactOf(t, email)
  await t.ctx.db
    .update(memberships)
    .set({ status })
    .where(and(eq(memberships.listId, listId), eq(memberships.contactId, contact!.id)))
}

/** Confirmation mails queued in the send ledger for members of the list. */
export async function confirmationJobsFor(t: TestApp, listId: number): Promise<number> {
  const row = await queryOne<{ n: number }>(
    t.ctx.db,
    sql`SELECT count(*)::int AS n FROM messages m
        WHERE m.kind = 'confirmation'
          AND m.contact_id IN (SELECT contact_id FROM memberships WHERE list_id = ${listId})`,
  )
  return row?.n ?? 0
}

export async function createList(t: TestApp, body: Record<string, unknown> = {}): Promise<number> {
  const res = await t.req('POST', '/lists', { body: { name: 'List', ...body } })
  if (res.status !== 200) throw new Error(`list not created: ${res.text}`)
  return res.body.id as number
}
