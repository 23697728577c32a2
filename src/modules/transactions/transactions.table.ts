import { sql } from 'drizzle-orm'
import {
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  serial,
  smallint,
  text,
  timestamp,
  primaryKey,
  uniqueIndex,
} from 'drizzle-orm/pg-core'
import { accounts } from '../accounts/accounts.table.js'

/**
 * Purchases reported by a shop (api.md "Transaction"). Campaign and automation statistics attribute
 * conversions from here: a purchase by a recipient within 7 days after their first click on the mail.
 * Money is `numeric` (decimal), never binary floats: sums of 0.1 and 0.2 must read 0.3.
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
    amount: numeric('amount').notNull().default('0'),
    tax: numeric('tax').notNull().default('0'),
    shipping: numeric('shipping').notNull().default('0'),
    city: text('city').notNull().default(''),
    county: text('county'),
    country: text('country').notNull().default(''),
    status: text('status').notNull().default(''),
    props: jsonb('props').$type<unknown>(),
    /** The purchase's own time (`timestamp` on the wire), UTC. */
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * How many times the order was overwritten (same order id sent again): the recommender learns that its
     * lines or time changed, which its id and the shop's count of orders do not show.
     */
    revision: integer('revision').notNull().default(0),
  },
  (t) => [
    // One order id per shop and account: two shops of one account may both have order 1001.
    uniqueIndex('transactions_account_shop_order_uq').on(t.accountId, t.shop, t.orderId),
    index('transactions_account_email_idx').on(t.accountId, t.email, t.occurredAt),
    index('transactions_account_time_idx').on(t.accountId, t.occurredAt),
  ],
)

/**
 * The lines of a purchase, one row each (not a jsonb array on the order): the recommender trains on
 * co-purchases of product codes per shop over many orders, which reads these rows by (account, shop, code)
 * without unpacking every order.
 */
export const transactionItems = pgTable(
  'transaction_items',
  {
    accountId: integer('account_id').notNull(),
    transactionId: integer('transaction_id')
      .notNull()
      .references(() => transactions.id, { onDelete: 'cascade' }),
    /** The order's shop, repeated so per-shop product reads need no join. */
    shop: text('shop').notNull().default(''),
    /** Order of the line within its purchase, as sent. */
    position: smallint('position').notNull().default(0),
    code: text('code').notNull().default(''),
    title: text('title').notNull().default(''),
    category: text('category').notNull().default(''),
    price: numeric('price').notNull().default('0'),
    /** Quantity. */
    amount: numeric('amount').notNull().default('1'),
    categories: text('categories')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
  },
  (t) => [
    // A line is its purchase and its place in it: no id of its own, one index less on a bulk import.
    primaryKey({ name: 'transaction_items_pk', columns: [t.transactionId, t.position] }),
    index('transaction_items_product_idx').on(t.accountId, t.shop, t.code),
  ],
)
