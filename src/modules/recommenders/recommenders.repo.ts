import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import type { RecommenderSettings, RecommenderStatus } from './recommenders.table.js'

export interface RecommenderRow {
  id: number
  account_id: number
  shop_id: string
  feed_id: number
  status: RecommenderStatus
  error: string | null
  settings: RecommenderSettings
  last_trained_at: Date | string | null
  created_at: Date | string
  /** Changes whenever its model, its feed's products or its settings do (recommendation-cache.ts keys on it). */
  model_key: string
}

const COLUMNS = sql.raw(
  `r.id, r.account_id, r.shop_id, r.feed_id, r.status, r.error, r.settings, r.last_trained_at, r.created_at,
   concat_ws('|', r.last_trained_at::text, r.trained_version,
             (SELECT f.refreshed_at::text FROM feeds f WHERE f.id = r.feed_id), r.settings::text) AS model_key`,
)

export async function feedOfAccount(ex: Executor, accountId: number, feedId: number): Promise<boolean> {
  const row = await queryOne(ex, sql`SELECT 1 FROM feeds WHERE id = ${feedId} AND account_id = ${accountId}`)
  return row !== undefined
}

/** Side effect: a new recommender in status `created`; undefined when the shop and feed already have one. */
export async function insertRecommender(
  ex: Executor,
  accountId: number,
  shopId: string,
  feedId: number,
  now: Date,
): Promise<RecommenderRow | undefined> {
  return queryOne<RecommenderRow>(
    ex,
    sql`INSERT INTO recommenders AS r (account_id, shop_id, feed_id, created_at)
        VALUES (${accountId}, ${shopId}, ${feedId}, ${now.toISOString()}::timestamptz)
        ON CONFLICT (account_id, shop_id, feed_id) DO NOTHING
        RETURNING ${COLUMNS}`,
  )
}

export function listRecommenders(ex: Executor, accountId: number): Promise<RecommenderRow[]> {
  return queryRows<RecommenderRow>(
    ex,
    sql`SELECT ${COLUMNS} FROM recommenders r WHERE r.account_id = ${accountId} ORDER BY r.id`,
  )
}

export function findRecommender(
  ex: Executor,
  accountId: number,
  id: number,
): Promise<RecommenderRow | undefined> {
  return queryOne<RecommenderRow>(
    ex,
    sql`SELECT ${COLUMNS} FROM recommenders r WHERE r.account_id = ${accountId} AND r.id = ${id}`,
  )
}

/** The account's recommenders among these ids (a mail's tags may name another account's: those are left out). */
export function recommendersByIds(ex: Executor, accountId: number, ids: number[]): Promise<RecommenderRow[]> {
  return queryRows<RecommenderRow>(
    ex,
    sql`SELECT ${COLUMNS} FROM recommenders r WHERE r.account_id = ${accountId}
          AND r.id IN (SELECT x::int FROM jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb) x)`,
  )
}

/**
 * Side effect: new settings. When the months it learns from change, it is trained again from the start
 * (status `created`); filters apply when recommending, so the model stays.
 */
export function updateSettings(
  ex: Executor,
  accountId: number,
  id: number,
  settings: RecommenderSettings,
  retrain: boolean,
): Promise<RecommenderRow | undefined> {
  const status = retrain ? sql`'created'` : sql`r.status`
  return queryOne<RecommenderRow>(
    ex,
    sql`UPDATE recommenders r SET settings = ${JSON.stringify(settings)}::jsonb, status = ${status}
        WHERE r.account_id = ${accountId} AND r.id = ${id}
        RETURNING ${COLUMNS}`,
  )
}

/** Side effect: deletes the recommender and its model (cascade); whether it was there. */
export async function deleteRecommender(ex: Executor, accountId: number, id: number): Promise<boolean> {
  const row = await queryOne(
    ex,
    sql`DELETE FROM recommenders WHERE account_id = ${accountId} AND id = ${id} RETURNING 1`,
  )
  return row !== undefined
}
