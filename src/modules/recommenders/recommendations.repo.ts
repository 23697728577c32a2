import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryRows } from '../../core/db/sql.js'
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

const jsonText = (values: readonly unknown[]) => JSON.stringify(values)

/**
 * ONE statement for any number of people: each one's top `limit` products. A person with purchases in the
 * shop gets the products bought with theirs (a product's score: the sum of its pair scores with each distinct
 * product they bought); one without gets the bestsellers. Never a product they bought, a filtered product,
 * a product in a filtered category (any segment of its feed category path), or a product not in the feed.
 * Ties go by product id. `emails` are as stored (trimmed, lower-cased).
 */
export function recommendFor(
  ex: Executor,
  model: ModelRef,
  emails: readonly string[],
  limit: number,
): Promise<RecommendedRow[]> {
  const filteredProducts = jsonText(model.settings.filtered_products ?? [])
  const filteredCategories = jsonText(model.settings.filtered_categories ?? [])
  const offered = sql`fp.product_id NOT IN (SELECT jsonb_array_elements_text(${filteredProducts}::jsonb))
      AND NOT (fp.categories ?| ARRAY(SELECT jsonb_array_elements_text(${filteredCategories}::jsonb)))`
  return queryRows<RecommendedRow>(
    ex,
    sql`WITH people AS (
          SELECT DISTINCT x AS email FROM jsonb_array_elements_text(${jsonText(emails)}::jsonb) x),
        bought AS (
          SELECT DISTINCT t.email, ti.code
          FROM people p
          JOIN transactions t ON t.account_id = ${model.account_id} AND t.email = p.email
            AND t.shop = ${model.shop_id}
          JOIN transaction_items ti ON ti.transaction_id = t.id
          WHERE ti.code <> ''),
        paired AS (
          SELECT b.email, rp.other_id AS product_id, sum(rp.score)::int AS score
          FROM bought b
          JOIN recommender_pairs rp ON rp.recommender_id = ${model.id} AND rp.product_id = b.code
          WHERE NOT EXISTS (SELECT 1 FROM bought o WHERE o.email = b.email AND o.code = rp.other_id)
          GROUP BY b.email, rp.other_id),
        best AS (
          SELECT s.product_id, s.score FROM recommender_bestsellers s
          JOIN feed_products fp ON fp.feed_id = ${model.feed_id} AND fp.product_id = s.product_id
          WHERE s.recommender_id = ${model.id} AND ${offered}
          ORDER BY s.rank LIMIT ${limit}),
        pool AS (
          SELECT email, product_id, score FROM paired
          UNION ALL
          SELECT p.email, best.product_id, best.score FROM people p CROSS JOIN best
          WHERE NOT EXISTS (SELECT 1 FROM bought b WHERE b.email = p.email)),
        ranked AS (
          SELECT pool.email, fp.product_id AS id, fp.title, fp.url, fp.image, fp.price::text AS price, pool.score,
                 row_number() OVER (PARTITION BY pool.email ORDER BY pool.score DESC, fp.product_id) AS rn
          FROM pool JOIN feed_products fp ON fp.feed_id = ${model.feed_id} AND fp.product_id = pool.product_id
          WHERE ${offered})
        SELECT email, id, title, url, image, price, score FROM ranked WHERE rn <= ${limit}
        ORDER BY email, rn`,
  )
}
