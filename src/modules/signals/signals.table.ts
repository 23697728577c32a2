import { bigserial, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { sql } from 'drizzle-orm'
import { accounts } from '../accounts/accounts.table.js'

/** What happened to a person that automations may start or move on: written by the module it happened in. */
export type SignalKind = 'purchase' | 'event' | 'subscribe' | 'tag'

/**
 * An outbox of things that happened to subscribers (a purchase, a tracker event; later subscribes and tags),
 * each written in the same transaction as the change itself, so a crash loses none. The automation engine
 * consumes them in id order and sets `consumed_at`.
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
    consumedAt: timestamp('consumed_at', { withTimezone: true }),
  },
  (t) => [
    // The consumer reads the unconsumed ones oldest first: a small partial index over just those.
    index('signals_pending_idx')
      .on(t.id)
      .where(sql`${t.consumedAt} IS NULL`),
    index('signals_account_idx').on(t.accountId, t.kind, t.createdAt),
  ],
)
