import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'
import { contactMergeColumns, type ContactForMerge } from '../messages/index.js'

/** A contact with what its merge tags need, by id or by the account's address. */
export async function contactForMerge(
  ex: Executor,
  by: { contactId: number } | { accountId: number; email: string },
): Promise<(ContactForMerge & { id: number }) | undefined> {
  const where =
    'contactId' in by ? sql`id = ${by.contactId}` : sql`account_id = ${by.accountId} AND email = ${by.email}`
  return queryOne<ContactForMerge & { id: number }>(
    ex,
    sql`SELECT id, ${contactMergeColumns('contacts')} FROM contacts WHERE ${where}`,
  )
}
