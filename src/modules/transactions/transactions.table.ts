import {
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  serial,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core'
import { accounts } from '../accounts/accounts.table.js'

export interface TransactionItem {
  order_id: string
  code: string
  title: string
  category: string
  price: number
  amount: number
  categories: string[]
}

/**
 * Purchases reported by a shop (api.md "Transaction"). Campaign and automation statistics attribute
 * conversions from here: a purchase by a recipient within 7 days after their first click on the mail.
 */
export const transactions = pgTable(
  'transactions',
  {
    id: serial('id').primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    orderId: text('order_id').notNull(),
    /** Stored trimmed and lower-cased, as contacts are. */
    email: text('email').notNull(),
    shop: text('shop').notNull().default(''),
    amount: doublePrecision('amount').notNull().default(0),
    tax: doublePrecision('tax').notNull().default(0),
    shipping: doublePrecision('shipping').notNull().default(0),
    city: text('city').notNull().default(''),
    county: text('county'),
    country: text('country').notNull().default(''),
    status: text('status').notNull().default(''),
    props: jsonb('props').$type<unknown>(),
    items: jsonb('items').$type<TransactionItem[]>().notNull().default([]),
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('transactions_account_order_uq').on(t.accountId, t.orderId),
    index('transactions_account_email_idx').on(t.accountId, t.email, t.occurredAt),
  ],
)
