import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import type { RecommenderSettings } from './recommenders.table.js'

/** Other products kept per product: more than a mail or a page ever shows, few enough to stay small. */
export const TOP_K = 50
/** Bestsellers kept: enough to fill a list after filters take some away. */
export const BESTSELLERS = 500

export interface TrainingRow {
  id: number
  account_id: number
  shop_id: string
  feed_id: number
  settings: RecommenderSettings
}

/**
 * What a model is built from, as one string: the shop's purchases (highest id, count and overwrites, so new,
 * deleted and overwritten ones all show), the feed's products (last refresh and count) and the months learnt
 * from.
 */
const versionOf = sql`concat_ws(':',
  (SELECT coalesce(max(t.id), 0) || '.' || count(*) || '.' || coalesce(sum(t.revision), 0) FROM transactions t
   WHERE t.account_id = r.account_id AND t.shop = r.shop_id),
  (SELECT coalesce(extract(epoch FROM f.refreshed_at)::text, '-') FROM feeds f WHERE f.id = r.feed_id),
  (SELECT count(*) FROM feed_products fp WHERE fp.feed_id = r.feed_id),
  md5(coalesce(r.settings->'included_months', '[]'::jsonb)::text))`

/**
 * The recommenders to train now: new ones (and those whose months changed), those whose data changed since
 * their last attempt once that attempt is `debounceBefore` old (a shop posting purchases all day is retrained
 * at that pace, not per purchase), and those a trainer took before `staleBefore` and never finished.
 */
export function dueRecommenders(
  ex: Executor,
  debounceBefore: Date,
  staleBefore: Date,
  limit: number,
): Promise<{ id: number }[]> {
  return queryRows<{ id: number }>(
    ex,
    sql`SELECT id FROM (
          SELECT r.id, r.status, r.attempted_at, r.trained_version,
                 CASE WHEN r.status IN ('ready', 'failed') THEN ${versionOf} END AS version
          FROM recommenders r) c
        WHERE c.status = 'created'
           OR (c.status = 'training' AND c.attempted_at < ${staleBefore.toISOString()}::timestamptz)
           OR (c.status IN ('ready', 'failed') AND c.version IS DISTINCT FROM c.trained_version
               AND (c.attempted_at IS NULL OR c.attempted_at <= ${debounceBefore.toISOString()}::timestamptz))
        ORDER BY c.attempted_at NULLS FIRST, c.id
        LIMIT ${limit}`,
  )
}

/**
 * Side effect: takes the recommender for training (status `training`) unless another trainer holds it (a
 * concurrent claim waits on the row and then finds it taken); the row to train, with the version it sees.
 */
export function claimForTraining(
  ex: Executor,
  id: number,
  now: Date,
  staleBefore: Date,
): Promise<(TrainingRow & { version: string }) | undefined> {
  return queryOne(
    ex,
    sql`UPDATE recommenders r SET status = 'training', attempted_at = ${now.toISOString()}::timestamptz
        WHERE r.id = ${id}
          AND (r.status <> 'training' OR r.attempted_at < ${staleBefore.toISOString()}::timestamptz)
        RETURNING r.id, r.account_id, r.shop_id, r.feed_id, r.settings, ${versionOf} AS version`,
  )
}

export async function feedProductCount(ex: Executor, feedId: number): Promise<number> {
  const row = await queryOne<{ n: number }>(
    ex,
    sql`SELECT count(*)::int AS n FROM feed_products WHERE feed_id = ${feedId}`,
  )
  return row?.n ?? 0
}

/**
 * Side effect, ONE statement: replaces the recommender's model. An order's distinct products are paired
 * with each other; a pair's score is the number of orders (of the shop, in the included calendar months)
 * holding both. Each product keeps its TOP_K best partners that are in the feed (a product gone from the
 * feed still says what its buyers like); bestsellers are the feed's products by orders holding them.
 */
export async function rebuildModel(
  ex: Executor,
  r: TrainingRow,
): Promise<{ pairs: number; bestsellers: number }> {
  const months = r.settings.included_months ?? []
  const inMonths =
    months.length === 0
      ? sql`true`
      : sql`EXISTS (SELECT 1 FROM transactions t WHERE t.id = ti.transaction_id
              AND extract(month FROM t.occurred_at AT TIME ZONE 'UTC')::int IN
                (SELECT x::int FROM jsonb_array_elements_text(${JSON.stringify(months)}::jsonb) x))`
  // The pairing sorts and groups millions of rows: in memory rather than in temporary files (this
  // transaction only).
  await ex.execute(sql`SET LOCAL work_mem = '256MB'`)
  await ex.execute(sql`DELETE FROM recommender_pairs WHERE recommender_id = ${r.id}`)
  await ex.execute(sql`DELETE FROM recommender_bestsellers WHERE recommender_id = ${r.id}`)
  const row = await queryOne<{ pairs: number; bestsellers: number }>(
    ex,
    sql`WITH items AS MATERIALIZED (
          SELECT DISTINCT ti.transaction_id, ti.code,
                 EXISTS (SELECT 1 FROM feed_products fp
                         WHERE fp.feed_id = ${r.feed_id} AND fp.product_id = ti.code) AS in_feed
          FROM transaction_items ti
          WHERE ti.account_id = ${r.account_id} AND ti.shop = ${r.shop_id} AND ti.code <> '' AND ${inMonths}),
        pairs AS (
          SELECT a.code AS product_id, b.code AS other_id, count(*)::int AS score
          FROM items a JOIN items b ON b.transaction_id = a.transaction_id AND b.code <> a.code AND b.in_feed
          GROUP BY a.code, b.code),
        ranked AS (
          SELECT product_id, other_id, score,
                 row_number() OVER (PARTITION BY product_id ORDER BY score DESC, other_id) AS rn
          FROM pairs),
        kept_pairs AS (
          INSERT INTO recommender_pairs (recommender_id, product_id, other_id, score)
          SELECT ${r.id}, product_id, other_id, score FROM ranked WHERE rn <= ${TOP_K}
          RETURNING 1),
        sold AS (
          SELECT code AS product_id, count(*)::int AS score FROM items WHERE in_feed GROUP BY code
          ORDER BY score DESC, code LIMIT ${BESTSELLERS}),
        kept_best AS (
          INSERT INTO recommender_bestsellers (recommender_id, product_id, score, rank)
          SELECT ${r.id}, product_id, score, row_number() OVER (ORDER BY score DESC, product_id) FROM sold
          RETURNING 1)
        SELECT (SELECT count(*)::int FROM kept_pairs) AS pairs, (SELECT count(*)::int FROM kept_best) AS bestsellers`,
  )
  return row ?? { pairs: 0, bestsellers: 0 }
}

/** Side effect: the model is ready (unless settings changed meanwhile and asked for a new one). */
export async function markTrained(ex: Executor, id: number, version: string, now: Date): Promise<void> {
  await ex.execute(
    sql`UPDATE recommenders SET status = CASE WHEN status = 'training' THEN 'ready' ELSE status END,
          error = NULL, trained_version = ${version}, last_trained_at = ${now.toISOString()}::timestamptz
        WHERE id = ${id}`,
  )
}

/** Side effect: training failed and why; it is tried again once its data changes. */
export async function markFailed(ex: Executor, id: number, version: string, reason: string): Promise<void> {
  await ex.execute(
    sql`UPDATE recommenders SET status = CASE WHEN status = 'training' THEN 'failed' ELSE status END,
          error = ${reason}, trained_version = ${version}
        WHERE id = ${id}`,
  )
}

/**
 * Side effect: fresh planner statistics for what recommending reads, after a training: the model tables (a
 * rebuild replaced many rows) and the purchases it was trained on (a shop's first import is often all of them
 * at once). Autovacuum would get there within a minute, but it may be off, and PGlite has none. Without
 * statistics PostgreSQL read a mail batch's purchases through the shop's whole order index, once per
 * person: 15-35 s for a batch of 500 instead of 8 ms, which stalled a recommending campaign
 * (docs/benchmarks-history.md).
 */
export async function analyzeModels(ex: Executor): Promise<void> {
  await ex.execute(sql`ANALYZE recommender_pairs, recommender_bestsellers, transactions, transaction_items`)
}
