import { and, eq, sql } from 'drizzle-orm'
import type { TestApp } from '../../../test/helpers/app.js'
import { queryOne } from '../../core/db/sql.js'
import { contacts, memberships } from '../subscribers/index.js'
import { queueConfirmationMail } from './index.js'

/**
 * Test fixtures: a contact with a membership, written and queued in one transaction, as the subscribe
 * endpoint does it.
 */
export async function addMember(
  t: TestApp,
  listId: number,
  email: string,
  status = 6,
): Promise<{ contactId: number }> {
  return t.ctx.db.transaction(async (tx) => {
    const [contact] = await tx
      .insert(contacts)
      .values({ accountId: t.account.id, email, name: 'Jana', surname: 'Nováková' })
      .returning({ id: contacts.id })
    const contactId = contact!.id
    await tx.insert(memberships).values({ accountId: t.account.id, listId, contactId, status })
    await queueConfirmationMail(t.ctx, tx, { accountId: t.account.id, listId, contactId })
    return { contactId }
  })
}

export async function membershipOf(t: TestApp, listId: number, contactId: number) {
  const [row] = await t.ctx.db
    .select()
    .from(memberships)
    .where(and(eq(memberships.listId, listId), eq(memberships.contactId, contactId)))
  return row
}

export async function statusByEmail(t: TestApp, listId: number, email: string): Promise<number | undefined> {
  const [row] = await t.ctx.db
    .select({ status: memberships.status })
    .from(memberships)
    .innerJoin(contacts, eq(contacts.id, memberships.contactId))
    .where(and(eq(memberships.listId, listId), eq(contacts.email, email)))
  return row?.status
}

/**
 * Waits until the sender is done with this contact's confirmation mail (accepted or refused), or finds none
 * was queued (the membership was not unconfirmed); returns 'completed' then.
 */
export async function jobDone(t: TestApp, contactId: number, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const row = await queryOne<{ pending: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS pending FROM messages
          WHERE kind = 'confirmation' AND contact_id = ${contactId} AND status IN (0, 4)`,
    )
    if (row?.pending === 0) return 'completed'
    if (Date.now() > deadline) throw new Error(`confirmation mail of contact ${contactId} still queued`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Confirmation mails queued in the send ledger. */
export async function countConfirmationJobs(t: TestApp): Promise<number> {
  const row = await queryOne<{ n: number }>(
    t.ctx.db,
    sql`SELECT count(*)::int AS n FROM messages WHERE kind = 'confirmation'`,
  )
  return row?.n ?? 0
}

/** The path of the confirm link in a mail body (the test app's PUBLIC_URL is http://127.0.0.1:3000). */
export function confirmPath(body: string): string {
  const m = /http:\/\/127\.0\.0\.1:3000(\/confirm\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/.exec(body)
  if (!m) throw new Error(`no confirm link in: ${body}`)
  return m[1]!
}
