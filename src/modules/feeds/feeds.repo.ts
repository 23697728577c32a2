import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import type { FeedProduct } from './feed-product.js'
import type { FeedErrorCode, FeedFormat, FeedKind, FeedRefreshState } from './feeds.table.js'

/** A feed as stored. */
export interface FeedRow {
  id: number
  account_id: number
  name: string
  url: string
  kind: FeedKind
  format: FeedFormat | null
  format_detected: boolean
  state: FeedRefreshState
  error: string | null
  error_code: FeedErrorCode | null
  item_count: number
  refresh_requested_at: Date | null
  refreshed_at: Date | null
  auto_refresh_at: Date | null
  created_at: Date
}

/** A stored product as recommenders and the products page read it; price is exact numeric text. */
export interface FeedProductRow {
  product_id: string
  title: string
  url: string
  image: string
  price: string | null
  categories: string[]
}

/** A timestamp parameter, as the other repos pass them (text cast on the server: same on both drivers). */
const ts = (d: Date) => sql`${d.toISOString()}::timestamptz`

const FEED_COLUMNS =
  sql.raw(`id, account_id, name, url, kind, format, format_detected, state, error, error_code, item_count,
  refresh_requested_at, refreshed_at, auto_refresh_at, created_at`)

/** PGlite hands timestamps back as Date, node-postgres too; this keeps both honest if either changes. */
function feedOf(row: FeedRow): FeedRow {
  const d = (v: Date | string | null) => (v === null ? null : new Date(v))
  return {
    ...row,
    item_count: Number(row.item_count),
    refresh_requested_at: d(row.refresh_requested_at),
    refreshed_at: d(row.refreshed_at),
    auto_refresh_at: d(row.auto_refresh_at),
    created_at: new Date(row.created_at),
  }
}

export interface NewFeed {
  name: string
  url: string
  kind: FeedKind
  format: FeedFormat | null
}

/**
 * Side effect: adds the feed. With `download` (automatic downloads on), it is queued for its first download at
 * once and due again at `autoRefreshAt`: the caller queues the job in the same transaction.
 */
export async function insertFeed(
  ex: Executor,
  accountId: number,
  f: NewFeed,
  now: Date,
  autoRefreshAt: Date | null,
): Promise<FeedRow> {
  const state = autoRefreshAt ? 'queued' : 'never'
  const row = await queryOne<FeedRow>(
    ex,
    sql`INSERT INTO feeds (account_id, name, url, kind, format, state, auto_refresh_at, created_at, updated_at)
        VALUES (${accountId}, ${f.name}, ${f.url}, ${f.kind}, ${f.format}, ${state},
                ${autoRefreshAt && ts(autoRefreshAt)}, ${ts(now)}, ${ts(now)})
        RETURNING ${FEED_COLUMNS}`,
  )
  return feedOf(row!)
}

export async function listFeeds(ex: Executor, accountId: number): Promise<FeedRow[]> {
  const rows = await queryRows<FeedRow>(
    ex,
    sql`SELECT ${FEED_COLUMNS} FROM feeds WHERE account_id = ${accountId} ORDER BY id`,
  )
  return rows.map(feedOf)
}

export async function findFeed(ex: Executor, accountId: number, id: number): Promise<FeedRow | undefined> {
  const row = await queryOne<FeedRow>(
    ex,
    sql`SELECT ${FEED_COLUMNS} FROM feeds WHERE account_id = ${accountId} AND id = ${id}`,
  )
  return row && feedOf(row)
}

/** Side effect: removes the feed; its products (and any staged ones) go with it by cascade. */
export async function deleteFeed(ex: Executor, accountId: number, id: number): Promise<boolean> {
  const rows = await queryRows(
    ex,
    sql`DELETE FROM feeds WHERE account_id = ${accountId} AND id = ${id} RETURNING id`,
  )
  return rows.length > 0
}

/** True in SQL while a refresh that started after `staleBefore` holds the feed (refreshStartedAt, the table). */
const refreshing = (staleBefore: Date) =>
  sql`(state = 'refreshing' AND refresh_started_at IS NOT NULL AND refresh_started_at > ${ts(staleBefore)})`

/**
 * Side effect: records a refresh request and queues the feed, unless one was recorded after `notBefore`.
 * One statement, so two requests at once cannot both pass the hourly rule. Undefined when refused (or absent).
 * A feed whose refresh is running (an automatic one) stays `refreshing`: the request is recorded and its answer
 * is that refresh's outcome, rather than a second refresh staging the same products beside it.
 */
export async function recordRefreshRequest(
  ex: Executor,
  accountId: number,
  id: number,
  now: Date,
  notBefore: Date,
  staleBefore: Date,
): Promise<FeedRow | undefined> {
  const row = await queryOne<FeedRow>(
    ex,
    sql`UPDATE feeds SET refresh_requested_at = ${ts(now)}, updated_at = ${ts(now)},
          state = CASE WHEN ${refreshing(staleBefore)} THEN state ELSE 'queued' END
        WHERE account_id = ${accountId} AND id = ${id}
          AND (refresh_requested_at IS NULL OR refresh_requested_at <= ${ts(notBefore)})
        RETURNING ${FEED_COLUMNS}`,
  )
  return row && feedOf(row)
}

/**
 * Side effect: takes a queued feed for refreshing, or one whose refresh started before `staleBefore` (its worker
 * died); undefined otherwise: another refresh has it, or it ended. Schedules the next automatic download
 * (`nextAuto`, null when they are off) from this one's start.
 */
export async function claimRefresh(
  ex: Executor,
  id: number,
  now: Date,
  staleBefore: Date,
  nextAuto: Date | null,
): Promise<FeedRow | undefined> {
  const row = await queryOne<FeedRow>(
    ex,
    sql`UPDATE feeds SET state = 'refreshing', refresh_started_at = ${ts(now)}, updated_at = ${ts(now)},
          auto_refresh_at = ${nextAuto ? ts(nextAuto) : sql`auto_refresh_at`}
        WHERE id = ${id}
          AND (state = 'queued' OR (state = 'refreshing' AND NOT ${refreshing(staleBefore)}))
        RETURNING ${FEED_COLUMNS}`,
  )
  return row && feedOf(row)
}

/**
 * Side effect: the feeds whose automatic download is due (up to `limit`, oldest first, none another worker is
 * taking) are due again at `next` and queued, unless a refresh of theirs is running; returns those queued, for
 * the caller to queue their jobs in the same transaction. A feed queued already gets a second job, which finds
 * it taken and skips (runFeedRefresh), so a job lost for good is made up for.
 */
export async function queueDueRefreshes(
  ex: Executor,
  now: Date,
  next: Date,
  staleBefore: Date,
  limit: number,
): Promise<number[]> {
  const rows = await queryRows<{ id: number | string; state: string }>(
    ex,
    sql`WITH due AS (
          SELECT id FROM feeds WHERE auto_refresh_at <= ${ts(now)}
          ORDER BY auto_refresh_at LIMIT ${limit}
          FOR UPDATE SKIP LOCKED)
        UPDATE feeds f SET auto_refresh_at = ${ts(next)}, updated_at = ${ts(now)},
          state = CASE WHEN ${refreshing(staleBefore)} THEN state ELSE 'queued' END
        FROM due WHERE f.id = due.id
        RETURNING f.id, f.state`,
  )
  return rows.filter((r) => r.state === 'queued').map((r) => Number(r.id))
}

export async function clearStaging(ex: Executor, feedId: number): Promise<void> {
  await ex.execute(sql`DELETE FROM feed_products_staging WHERE feed_id = ${feedId}`)
}

const STAGED_COLUMNS = sql.raw(`product_id text, title text, url text, image text, price numeric,
  categories jsonb, extra jsonb`)

/** Side effect: stages one batch (one statement, one JSON parameter); a repeated id keeps its last values. */
export async function stageProducts(
  ex: Executor,
  feedId: number,
  accountId: number,
  products: FeedProduct[],
): Promise<void> {
  if (products.length === 0) return
  const rows = products.map((p) => ({
    product_id: p.id,
    title: p.title,
    url: p.url,
    image: p.image,
    price: p.price,
    categories: p.categories,
    extra: p.extra,
  }))
  await ex.execute(sql`INSERT INTO feed_products_staging
      (feed_id, product_id, account_id, title, url, image, price, categories, extra)
    SELECT ${feedId}::int, r.product_id, ${accountId}::int, r.title, r.url, r.image, r.price,
           r.categories, r.extra
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(${STAGED_COLUMNS})
    ON CONFLICT (feed_id, product_id) DO UPDATE SET title = excluded.title, url = excluded.url,
      image = excluded.image, price = excluded.price, categories = excluded.categories, extra = excluded.extra`)
}

/**
 * Side effect, inside the caller's transaction: the staged products become the feed's products (the old ones
 * go), the staging rows are dropped, and the feed says so. Returns how many products it now has.
 */
export async function swapInStaged(
  tx: Executor,
  feedId: number,
  format: FeedFormat | null,
  now: Date,
): Promise<number> {
  await tx.execute(sql`DELETE FROM feed_products WHERE feed_id = ${feedId}`)
  const moved = await queryOne<{ n: number | string }>(
    tx,
    sql`WITH moved AS (
          INSERT INTO feed_products (feed_id, product_id, account_id, title, url, image, price, categories, extra)
          SELECT feed_id, product_id, account_id, title, url, image, price, categories, extra
          FROM feed_products_staging WHERE feed_id = ${feedId}
          RETURNING 1)
        SELECT count(*) AS n FROM moved`,
  )
  const count = Number(moved?.n ?? 0)
  await clearStaging(tx, feedId)
  await tx.execute(sql`UPDATE feeds SET state = 'ok', error = NULL, error_code = NULL, item_count = ${count},
      refreshed_at = ${ts(now)}, updated_at = ${ts(now)}, format = CASE WHEN format IS NULL OR format_detected THEN coalesce(${format}::text, format) ELSE format END,
      format_detected = (format IS NULL OR format_detected)
    WHERE id = ${feedId}`)
  return count
}

/** Side effect: the refresh failed; the products stay as they were and the feed says why. */
export async function markFailed(
  ex: Executor,
  feedId: number,
  error: string,
  code: FeedErrorCode,
  now: Date,
): Promise<void> {
  await ex.execute(
    sql`UPDATE feeds SET state = 'failed', error = ${error}, error_code = ${code}, updated_at = ${ts(now)}
        WHERE id = ${feedId}`,
  )
}

const PRODUCT_COLUMNS = sql.raw(`product_id, title, url, image, price::text AS price, categories`)

export async function productsPage(
  ex: Executor,
  feedId: number,
  limit: number,
  offset: number,
): Promise<FeedProductRow[]> {
  return queryRows<FeedProductRow>(
    ex,
    sql`SELECT ${PRODUCT_COLUMNS} FROM feed_products WHERE feed_id = ${feedId}
        ORDER BY product_id LIMIT ${limit} OFFSET ${offset}`,
  )
}

/** The products with these ids (the shop's product ids) in the feed; ids it lacks are simply absent. */
export async function feedProductsByIds(
  ex: Executor,
  feedId: number,
  productIds: string[],
): Promise<FeedProductRow[]> {
  if (productIds.length === 0) return []
  return queryRows<FeedProductRow>(
    ex,
    sql`SELECT ${PRODUCT_COLUMNS} FROM feed_products
        WHERE feed_id = ${feedId} AND product_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(productIds)}::jsonb))`,
  )
}
