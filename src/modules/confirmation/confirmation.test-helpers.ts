import { and, eq, sql } from 'drizzle-orm'
import type { TestApp } from '../../../test/helpers/app.js'
import { queryOne } from '../../core/db/sql.js'
import { contacts, memberships } from '../subscribers/index.js'
import { CONFIRMATION_MAIL_JOB, queueConfirmationMail } from './index.js'

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

/** Waits until the worker has finished the confirmation job of this contact; returns its final state. */
export async function jobDone(t: TestApp, contactId: number, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const row = await queryOne<{ state: string }>(
      t.ctx.db,
      sql`SELECT state FROM pgboss.job
          WHERE name = ${CONFIRMATION_MAIL_JOB} AND (data->>'contactId')::int = ${contactId}`,
    )
    if (row && ['completed', 'failed', 'cancelled'].includes(row.state)) return row.state
    if (Date.now() > deadline) throw new Error(`confirmation job of contact ${contactId}: ${row?.state}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

export async function countConfirmationJobs(t: TestApp): Promise<number> {
  const row = await queryOne<{ n: number }>(
    t.ctx.db,
    sql`SELECT count(*)::int AS n FROM pgboss.job WHERE name = ${CONFIRMATION_MAIL_JOB}`,
  )
  return row?.n ?? 0
}

/** The path of the confirm link in a mail body (the test app's PUBLIC_URL is http://127.0.0.1:3000). */
export function confirmPath(body: string): string {
  const m = /http:\/\/127\.0\.0\.1:3000(\/confirm\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/.exec(body)
  if (!m) throw new Error(`no confirm link in: ${body}`)
  return m[1]!
}
