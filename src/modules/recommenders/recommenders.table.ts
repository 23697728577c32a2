import {
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  serial,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core'
import { accounts } from '../accounts/accounts.table.js'
import { feeds } from '../feeds/index.js'

export type RecommenderStatus = 'created' | 'training' | 'ready' | 'failed'

/**
 * What a recommender leaves out or looks at. `included_months`: calendar months (1 = January … 12 = December,
 * UTC) of the purchases it learns from; empty: every purchase.
 */
export interface RecommenderSettings {
  filtered_products: string[]
  filtered_categories: string[]
  included_months: number[]
}

/** A model of one shop's co-purchases, offered from one product feed (api.md "Recommender"). */
export const recommenders = pgTable(
  'recommenders',
  {
    id: serial('id').primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** The `shop` of the account's transactions it learns from ('' = purchases sent without a shop). */
    shopId: text('shop_id').notNull(),
    // A recommender offers only its feed's products: without the feed it has nothing to offer.
    feedId: integer('feed_id')
      .notNull()
      .references(() => feeds.id, { onDelete: 'cascade' }),
    status: text('status').$type<RecommenderStatus>().notNull().default('created'),
    /** Why the last training failed; null otherwise. */
    error: text('error'),
    settings: jsonb('settings')
      .$type<RecommenderSettings>()
      .notNull()
      .default({ filtered_products: [], filtered_categories: [], included_months: [] }),
    /** When the model in recommender_pairs/_bestsellers was last built. */
    lastTrainedAt: timestamp('last_trained_at', { withTimezone: true }),
    /** When a trainer took it (a crashed trainer's claim runs out) or last tried: retraining is debounced on it. */
    attemptedAt: timestamp('attempted_at', { withTimezone: true }),
    /** The data the last attempt saw (purchases, feed refresh, settings): a different one asks for retraining. */
    trainedVersion: text('trained_version'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('recommenders_account_shop_feed_uq').on(t.accountId, t.shopId, t.feedId)],
)

/** The trained model: for each product the top-K others bought in the same orders, score = such orders. */
export const recommenderPairs = pgTable(
  'recommender_pairs',
  {
    recommenderId: integer('recommender_id')
      .notNull()
      .references(() => recommenders.id, { onDelete: 'cascade' }),
    productId: text('product_id').notNull(),
    otherId: text('other_id').notNull(),
    score: integer('score').notNull(),
  },
  (t) => [primaryKey({ columns: [t.recommenderId, t.productId, t.otherId] })],
)

/** The most purchased products (orders holding them), for people with no purchases yet. */
export const recommenderBestsellers = pgTable(
  'recommender_bestsellers',
  {
    recommenderId: integer('recommender_id')
      .notNull()
      .references(() => recommenders.id, { onDelete: 'cascade' }),
    productId: text('product_id').notNull(),
    score: integer('score').notNull(),
    rank: integer('rank').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.recommenderId, t.productId] }),
    index('recommender_bestsellers_rank_idx').on(t.recommenderId, t.rank),
  ],
)
