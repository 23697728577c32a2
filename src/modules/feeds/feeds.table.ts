import {
  boolean,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  serial,
  text,
  timestamp,
} from 'drizzle-orm/pg-core'
import { sql } from 'drizzle-orm'
import { accounts } from '../accounts/accounts.table.js'

export type FeedKind = 'product' | 'data'
/** The format of the downloaded file: given at creation or detected at the first refresh. */
export type FeedFormat = 'heureka' | 'google' | 'csv'
export type FeedRefreshState = 'never' | 'queued' | 'refreshing' | 'ok' | 'failed'
/**
 * Why the last refresh failed: `item_limit` (50,000 items or more), `bad_feed` (the download or the file: the
 * feed's fault, answered 422) or `server` (ours).
 */
export type FeedErrorCode = 'item_limit' | 'bad_feed' | 'server'

/** A shop's product catalogue (contract §8), downloaded from `url` on refresh. */
export const feeds = pgTable(
  'feeds',
  {
    id: serial('id').primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    url: text('url').notNull(),
    kind: text('kind').$type<FeedKind>().notNull().default('product'),
    format: text('format').$type<FeedFormat>(),
    /**
     * True when `format` was detected by a refresh rather than given: later refreshes detect again (a shop may
     * change its export), while a given format is always the one read.
     */
    formatDetected: boolean('format_detected').notNull().default(false),
    state: text('state').$type<FeedRefreshState>().notNull().default('never'),
    /** Why the last refresh failed (the previous products stay); null after a good one. */
    error: text('error'),
    /** The kind of `error`, which the refresh request's answer follows; null after a good refresh. */
    errorCode: text('error_code').$type<FeedErrorCode>(),
    itemCount: integer('item_count').notNull().default(0),
    /** When a refresh was last asked for: a second one within the hour is refused (429). */
    refreshRequestedAt: timestamp('refresh_requested_at', { withTimezone: true }),
    refreshedAt: timestamp('refreshed_at', { withTimezone: true }),
    /**
     * When the worker downloads the feed of its own accord (config `feedAutoRefreshHours`): at creation, then
     * that many hours after each download started. Null: not scheduled (automatic downloads are off).
     */
    autoRefreshAt: timestamp('auto_refresh_at', { withTimezone: true }),
    /**
     * When the refresh in `refreshing` started: one refresh of a feed at a time stages its products, and another
     * takes the feed over only once this is older than any refresh can run (its worker died).
     */
    refreshStartedAt: timestamp('refresh_started_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('feeds_account_idx').on(t.accountId, t.id),
    index('feeds_auto_refresh_idx')
      .on(t.autoRefreshAt)
      .where(sql`auto_refresh_at IS NOT NULL`),
  ],
)

/**
 * The columns of a product row, for feed_products and its staging table alike (a function: each table needs
 * column builders of its own).
 */
const productColumns = () => ({
  feedId: integer('feed_id')
    .notNull()
    .references(() => feeds.id, { onDelete: 'cascade' }),
  /** The shop's product id (ITEM_ID / g:id / id column): what transaction items carry as `code`. */
  productId: text('product_id').notNull(),
  accountId: integer('account_id').notNull(),
  title: text('title').notNull().default(''),
  url: text('url').notNull().default(''),
  image: text('image').notNull().default(''),
  price: numeric('price'),
  /** Category path segments, e.g. ["Electronics", "Phones"]. */
  categories: jsonb('categories').$type<string[]>().notNull().default([]),
  /** Everything else the feed said of the product, by element or column name. */
  extra: jsonb('extra').$type<Record<string, string>>().notNull().default({}),
})

/**
 * The products of a feed's last good refresh; a refresh replaces them all in one transaction. Recommenders
 * read title, url, image, price and categories from here and never offer a product that is not in it.
 */
export const feedProducts = pgTable('feed_products', productColumns(), (t) => [
  primaryKey({ columns: [t.feedId, t.productId] }),
])

/**
 * Where a refresh puts the products it reads, a batch at a time, before one short transaction swaps them
 * into feed_products. The download never holds a transaction open (on the embedded database that would stall
 * every other statement for as long as the feed's server takes), and a failed refresh leaves feed_products
 * as it was. A refresh clears its feed's rows first, so rows a crashed worker left behind go then.
 */
export const feedProductsStaging = pgTable('feed_products_staging', productColumns(), (t) => [
  primaryKey({ columns: [t.feedId, t.productId] }),
])
