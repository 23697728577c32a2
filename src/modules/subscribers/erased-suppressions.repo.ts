import { and, eq, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryRows } from '../../core/db/sql.js'
import { erasedSuppressions } from './erased-suppressions.table.js'

/**
 * The suppressions kept through a GDPR erasure (contract §3), by keyed hash (erased-suppressions.ts).
 * A row lives only while its address has no contact: the writes that create a contact take the suppression
 * back onto it (`erasedReason` in their INSERT, then `forgetErased`), so from there on the usual rules apply
 * (campaigns skip suppressed contacts; resubscribe / allow_resubscribe lift it).
 */

type Reason = 'hard_bounce' | 'complaint'

/** Side effect: remembers that the erased address (by hash) was suppressed; a repeat keeps the newest reason. */
export async function rememberErased(
  ex: Executor,
  accountId: number,
  addressHash: string,
  reason: Reason,
  now: Date,
): Promise<void> {
  await ex
    .insert(erasedSuppressions)
    .values({ accountId, addressHash, reason, erasedAt: now })
    .onConflictDoUpdate({
      target: [erasedSuppressions.accountId, erasedSuppressions.addressHash],
      set: { reason, erasedAt: now },
    })
}

/** The remembered reason for the address with this hash, as a scalar subquery for a contact INSERT. */
export function erasedReason(accountId: number, addressHash: SQL | string): SQL {
  return sql`(SELECT e.reason FROM erased_suppressions e
              WHERE e.account_id = ${accountId} AND e.address_hash = ${addressHash})`
}

/** Side effect: forgets the remembered suppression, once it lives on a contact again. */
export async function forgetErased(ex: Executor, accountId: number, addressHash: string): Promise<void> {
  await ex
    .delete(erasedSuppressions)
    .where(and(eq(erasedSuppressions.accountId, accountId), eq(erasedSuppressions.addressHash, addressHash)))
}

/**
 * Side effects: an existing contact that moves to a remembered address (update-subscriber's change of email)
 * takes its suppression: the row goes, the contact is suppressed and its memberships move to 4 or 5 exactly as
 * applyHardBounce / applyComplaint would move them. Returns the reason, or null when the address was not remembered.
 */
export async function restoreErasedOnto(
  ex: Executor,
  accountId: number,
  contactId: number,
  addressHash: string,
  now: Date,
): Promise<Reason | null> {
  const at = sql`${now.toISOString()}::timestamptz`
  const rows = await queryRows<{ reason: Reason }>(
    ex,
    sql`WITH gone AS (
          DELETE FROM erased_suppressions
          WHERE account_id = ${accountId} AND address_hash = ${addressHash}
          RETURNING reason),
        c AS (
          UPDATE contacts SET suppressed = gone.reason, updated_at = ${at}
          FROM gone WHERE contacts.id = ${contactId} AND contacts.account_id = ${accountId}
          RETURNING contacts.id, gone.reason),
        m AS (
          UPDATE memberships SET status = CASE WHEN c.reason = 'hard_bounce' THEN 4 ELSE 5 END, updated_at = ${at}
          FROM c WHERE memberships.contact_id = c.id
            AND (memberships.status IN (1, 6) OR (c.reason = 'complaint' AND memberships.status = 2))
          RETURNING 1)
        SELECT reason FROM c`,
  )
  return rows[0]?.reason ?? null
}

/**
 * A query of the (account, address) pairs among `pairs` (a relation with columns a, email, hash) that are
 * remembered as suppressed.
 */
export function erasedAmong(pairs: SQL): SQL {
  return sql`SELECT p.a, p.email FROM ${pairs} p
             JOIN erased_suppressions e ON e.account_id = p.a AND e.address_hash = p.hash`
}
