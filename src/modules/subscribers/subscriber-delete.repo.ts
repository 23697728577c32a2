import { and, eq } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { contacts } from './subscribers.table.js'

/**
 * Side effect: deletes the account's contact with this address; its memberships in every list go with it
 * (ON DELETE CASCADE). Returns its account-wide suppression (null when none), or undefined when there was no
 * such contact.
 */
export async function deleteContact(
  ex: Executor,
  accountId: number,
  email: string,
): Promise<{ suppressed: 'hard_bounce' | 'complaint' | null } | undefined> {
  const [row] = await ex
    .delete(contacts)
    .where(and(eq(contacts.accountId, accountId), eq(contacts.email, email)))
    .returning({ suppressed: contacts.suppressed })
  return row
}
