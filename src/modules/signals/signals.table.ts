import { bigserial, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { accounts } from '../accounts/accounts.table.js'

/** What happened to a person that automations may start or move on: written by the module it happened in. */
export type SignalKind = 'purchase' | 'event' | 'subscribe' | 'tag'

/**
 * An outbox of things that happened to subscribers (a purchase, a tracker event, a subscribe, tags added),
 * each written in the same transaction as the change itself, so a crash loses none. The automation engine
 * consumes them in id order and deletes them in the transaction that acts on them: nothing reads a consumed
 * signal, and kept they grew the table by a row for every tag, subscribe, event and purchase, for ever, each
 * with an address in it.
 */
export const signals = pgTable(
  'signals',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    kind: text('kind').$type<SignalKind>().notNull(),
    /** The person, trimmed and lower-cased. */
    email: text('email').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  // The consumer reads them oldest first by the primary key.
  (t) => [index('signals_account_idx').on(t.accountId, t.kind, t.createdAt)],
)
