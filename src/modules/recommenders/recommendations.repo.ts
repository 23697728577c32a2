import { sql, type SQL } from 'drizzle-orm'
import type { DbHandle, Executor } from '../../core/db/client.js'
import { queryPrepared, queryRows } from '../../core/db/sql.js'
import { TOP_K } from './recommender-train.repo.js'
import type { RecommenderSettings } from './recommenders.table.js'

export interface RecommendedRow {
  email: string
  id: string
  title: string
  url: string
  image: string
  price: string | null
  score: number
}

export interface ModelRef {
  id: number
  account_id: number
  shop_id: string
  feed_id: number
  settings: RecommenderSettings
}

/** Candidates per person looked up in the feed beyond `limit`. */
const SPARE = 10

const jsonText = (values: readonly unknown[]) => JSON.stringify(values)

/**
 * ONE statement for any number of people: each one's top `limit` products. A person with purchases in the
 * shop gets the products bought with theirs (a product's score: the sum of its pair scores with each distinct
 * product they bought); one without gets the bestsellers. Never a product they bought, a filtered product,
 * a product in a filtered category (any segment of its feed category path), or a product not in the feed.
 * Ties go by product id. `emails` are as stored (trimmed, lower-cased).
 *
 * The filtered products are found once, up front; candidates are ranked per person before the feed is read,
 * and only the first few per person are looked up there (the model holds only feed products, so the few spare
 * ones cover products that left the feed since it was trained).
 */
export function recommendationSql(model: ModelRef, emails: readonly string[], limit: number): SQL {
  const filteredProducts = jsonText(model.settings.filtered_products ?? [])
  const categories = model.settings.filtered_categories ?? []
  const inFilteredCategory = categories.length
    ? sql`SELECT fp.product_id FROM feed_products fp WHERE fp.feed_id = ${model.feed_id}
            AND fp.categories ?| ARRAY(SELECT jsonb_array_elements_text(${jsonText(categories)}::jsonb))`
    : sql`SELECT NULL::text WHERE false`
  const spare = limit + SPARE
  // One person (the API): a one-row CTE the planner counts as one. From a JSON array it would guess 100 people,
  // 1,600 products bought and 40,000 pairs, a cost past jit_above_cost: PostgreSQL then JIT-compiled the plan
  // at every request, some 200 ms of CPU for a statement that runs in a few.
  const people =
    emails.length === 1
      ? sql`SELECT ${emails[0]}::text AS email`
      : sql`SELECT DISTINCT x AS email FROM jsonb_array_elements_text(${jsonText(emails)}::jsonb) x`
  return sql`WITH people AS (${people}),
        excluded AS MATERIALIZED (
          SELECT jsonb_array_elements_text(${filteredProducts}::jsonb) AS product_id
          UNION ${inFilteredCategory}),
        bought AS (
          SELECT DISTINCT t.email, ti.code
          FROM people p
          JOIN transactions t ON t.account_id = ${model.account_id} AND t.email = p.email
            AND t.shop = ${model.shop_id}
          JOIN transaction_items ti ON ti.transaction_id = t.id
          WHERE ti.code <> ''),
        -- LATERAL … LIMIT keeps one index probe per product bought, whatever the planner thinks of the
        -- freshly rebuilt model's statistics (a join would sort all of it).
        paired AS (
          SELECT b.email, rp.other_id AS product_id, sum(rp.score)::int AS score
          FROM bought b
          CROSS JOIN LATERAL (
            SELECT x.other_id, x.score FROM recommender_pairs x
            WHERE x.recommender_id = ${model.id} AND x.product_id = b.code
            LIMIT ${TOP_K}) rp
          WHERE NOT EXISTS (SELECT 1 FROM bought o WHERE o.email = b.email AND o.code = rp.other_id)
            AND rp.other_id NOT IN (SELECT product_id FROM excluded WHERE product_id IS NOT NULL)
          GROUP BY b.email, rp.other_id),
        best AS (
          SELECT s.product_id, s.score FROM recommender_bestsellers s
          WHERE s.recommender_id = ${model.id}
            AND s.product_id NOT IN (SELECT product_id FROM excluded WHERE product_id IS NOT NULL)
          ORDER BY s.rank LIMIT ${spare}),
        pool AS (
          SELECT email, product_id, score FROM paired
          UNION ALL
          SELECT p.email, best.product_id, best.score FROM people p CROSS JOIN best
          WHERE NOT EXISTS (SELECT 1 FROM bought b WHERE b.email = p.email)),
        first AS (
          SELECT email, product_id, score FROM (
            SELECT email, product_id, score,
                   row_number() OVER (PARTITION BY email ORDER BY score DESC, product_id) AS rn
            FROM pool) ranked
          WHERE rn <= ${spare}),
        offered AS (
          SELECT first.email, fp.product_id AS id, fp.title, fp.url, fp.image, fp.price::text AS price, first.score,
                 row_number() OVER (PARTITION BY first.email ORDER BY first.score DESC, fp.product_id) AS rn
          FROM first
          CROSS JOIN LATERAL (
            SELECT * FROM feed_products f
            WHERE f.feed_id = ${model.feed_id} AND f.product_id = first.product_id LIMIT 1) fp)
        SELECT email, id, title, url, image, price, score FROM offered WHERE rn <= ${limit}
        ORDER BY email, rn`
}

export function recommendFor(
  ex: Executor,
  model: ModelRef,
  emails: readonly string[],
  limit: number,
): Promise<RecommendedRow[]> {
  return queryRows<RecommendedRow>(ex, recommendationSql(model, emails, limit))
}

/**
 * recommendFor as a prepared statement (the API's hot path): its planning costs more than running it for one
 * person.
 */
export function recommendPrepared(
  handle: DbHandle,
  model: ModelRef,
  emails: readonly string[],
  limit: number,
): Promise<RecommendedRow[]> {
  return queryPrepared<RecommendedRow>(handle, recommendationSql(model, emails, limit))
}

/**
 * recommendFor over a batch of mail: its sorts of a few hundred thousand candidates stay in memory, and the
 * plan is not JIT-compiled (its estimated cost is past jit_above_cost; the compiling cost more than it saved).
 */
export function recommendForBatch(
  ex: Executor,
  model: ModelRef,
  emails: readonly string[],
  limit: number,
): Promise<RecommendedRow[]> {
  return ex.transaction(async (tx) => {
    await tx.execute(sql`SET LOCAL work_mem = '64MB'`)
    await tx.execute(sql`SET LOCAL jit = off`)
    return recommendFor(tx, model, emails, limit)
  })
}
