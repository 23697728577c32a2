import { integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'
import { accounts } from '../accounts/accounts.table.js'

/**
 * Suppressions that outlive a GDPR erasure (contract §3): when a hard-bounced or complained address is erased,
 * only a keyed hash of it stays here, so a later import, campaign or transactional send still treats it as
 * suppressed. No plain address: the key (`erasureSecret`) lives in the database, not in this table, and the
 * hash includes the account, so rows of two accounts cannot be matched with each other.
 * A row exists only while the address has no contact in the account: when it becomes one again, the
 * suppression moves back onto the contact and the row goes.
 */
export const erasedSuppressions = pgTable(
  'erased_suppressions',
  {
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** Hex HMAC-SHA256 of `<account id>:<normalised address>` (erased-suppressions.ts). */
    addressHash: text('address_hash').notNull(),
    reason: text('reason').$type<'hard_bounce' | 'complaint'>().notNull(),
    erasedAt: timestamp('erased_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.addressHash] })],
)
