import { sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryRows } from '../../core/db/sql.js'
import { BESTSELLERS } from './recommender-train.repo.js'

/**
 * The small reads recommendations are made of (recommend.ts ranks them in the process): the people's
 * purchases, read live every time, and the model and feed parts, which recommendation-cache.ts keeps until the
 * model is retrained, the feed refreshed or the settings changed.
 */

const jsonText = (values: readonly unknown[]) => JSON.stringify(values)

/** One value as `= $1` (planned as one row), several as a set read from one JSON parameter. */
function isOneOf(column: SQL, values: readonly string[]): SQL {
  return values.length === 1
    ? sql`${column} = ${values[0]}`
    : sql`${column} IN (SELECT jsonb_array_elements_text(${jsonText(values)}::jsonb))`
}

/** The distinct products each of these people bought in the shop (`emails` as stored: trimmed, lower-cased). */
export function boughtBy(
  ex: Executor,
  accountId: number,
  shop: string,
  emails: readonly string[],
): Promise<{ email: string; code: string }[]> {
  if (emails.length === 0) return Promise.resolve([])
  const people =
    emails.length === 1
      ? sql`SELECT ${emails[0]}::text AS email`
      : sql`SELECT DISTINCT x AS email FROM jsonb_array_elements_text(${jsonText(emails)}::jsonb) x`
  // Each person probes the (account, email) index: a few milliseconds for a batch of 500. That plan needs
  // statistics on the purchases; without them PostgreSQL took the shop's orders for one row and scanned them
  // all per person, so training analyzes them (analyzeModels).
  return queryRows(
    ex,
    sql`SELECT DISTINCT p.email, ti.code
        FROM (${people}) p
        CROSS JOIN LATERAL (
          SELECT t.id FROM transactions t
          WHERE t.account_id = ${accountId} AND t.email = p.email AND t.shop = ${shop}) t
        JOIN transaction_items ti ON ti.transaction_id = t.id
        WHERE ti.code <> ''`,
  )
}

/** The model's partners of these products (each product keeps at most TOP_K, best first). */
export function partnersOf(
  ex: Executor,
  recommenderId: number,
  codes: readonly string[],
): Promise<{ product_id: string; other_id: string; score: number }[]> {
  if (codes.length === 0) return Promise.resolve([])
  return queryRows(
    ex,
    sql`SELECT product_id, other_id, score FROM recommender_pairs
        WHERE recommender_id = ${recommenderId} AND ${isOneOf(sql`product_id`, codes)}
        ORDER BY product_id, score DESC, other_id`,
  )
}

/** The model's bestsellers, best first. */
export function bestsellersOf(
  ex: Executor,
  recommenderId: number,
): Promise<{ product_id: string; score: number }[]> {
  return queryRows(
    ex,
    sql`SELECT product_id, score FROM recommender_bestsellers WHERE recommender_id = ${recommenderId}
        ORDER BY rank LIMIT ${BESTSELLERS}`,
  )
}

/** The feed's products in any of these categories (any segment of a product's category path). */
export async function productsInCategories(
  ex: Executor,
  feedId: number,
  categories: readonly string[],
): Promise<string[]> {
  if (categories.length === 0) return []
  const rows = await queryRows<{ product_id: string }>(
    ex,
    sql`SELECT fp.product_id FROM feed_products fp WHERE fp.feed_id = ${feedId}
          AND fp.categories ?| ARRAY(SELECT jsonb_array_elements_text(${jsonText(categories)}::jsonb))`,
  )
  return rows.map((r) => r.product_id)
}
