import { and, eq } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { contacts } from './subscribers.table.js'

/**
 * Side effect: deletes the account's contact with this address; its memberships in every list go with it
 * (ON DELETE CASCADE). Returns whether there was one.
 */
export async function deleteContact(ex: Executor, accountId: number, email: string): Promise<boolean> {
  const rows = await ex
    .delete(contacts)
    .where(and(eq(contacts.accountId, accountId), eq(contacts.email, email)))
    .returning({ id: contacts.id })
  return rows.length > 0
}
