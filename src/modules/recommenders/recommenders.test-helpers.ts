import { sql } from 'drizzle-orm'
import type { TestApp, TestAccount } from '../../../test/helpers/app.js'
import { queryOne } from '../../core/db/sql.js'

export interface SeedProduct {
  id: string
  title?: string
  price?: number | null
  categories?: string[]
}

/**
 * A feed with these products, written straight into feeds and feed_products (as a refresh leaves them), so
 * these tests need no feed download. Its id.
 */
export async function seedFeed(t: TestApp, accountId: number, products: SeedProduct[]): Promise<number> {
  const feed = await queryOne<{ id: number }>(
    t.ctx.db,
    sql`INSERT INTO feeds (account_id, name, url, state, refreshed_at, item_count)
        VALUES (${accountId}, 'Products', 'http://127.0.0.1:9/feed.xml', 'ok', now(), ${products.length})
        RETURNING id`,
  )
  if (products.length) await addFeedProducts(t, feed!.id, accountId, products)
  return feed!.id
}

export async function addFeedProducts(
  t: TestApp,
  feedId: number,
  accountId: number,
  products: SeedProduct[],
) {
  const rows = products.map((p) => ({
    id: p.id,
    title: p.title ?? `Product ${p.id}`,
    url: `https://shop.example/p/${p.id}`,
    image: `https://shop.example/img/${p.id}.jpg`,
    price: p.price === undefined ? '199.90' : p.price === null ? null : String(p.price),
    categories: p.categories ?? [],
  }))
  await t.ctx.db.execute(
    sql`INSERT INTO feed_products (feed_id, product_id, account_id, title, url, image, price, categories)
        SELECT ${feedId}, x.id, ${accountId}, x.title, x.url, x.image, x.price::numeric, x.categories
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS x(id text, title text, url text, image text, price text, categories jsonb)`,
  )
}

export interface Order {
  orderId: string
  email: string
  shop: string
  /** YYYY-MM-DD HH:MM:SS (UTC) */
  at: string
  codes: string[]
}

/** Posts the orders through POST /tracker/transaction-bulk, as a shop would. */
export async function postOrders(t: TestApp, account: TestAccount, orders: Order[]): Promise<void> {
  for (let i = 0; i < orders.length; i += 1000) {
    const res = await t.req('POST', '/tracker/transaction-bulk', {
      key: account.key,
      body: {
        transaction_data: orders.slice(i, i + 1000).map((o) => ({
          transaction: { order_id: o.orderId, email: o.email, shop: o.shop, amount: 10, timestamp: o.at },
          transaction_items: o.codes.map((code) => ({ code, title: code, price: 5, amount: 1 })),
        })),
      },
    })
    if (res.status !== 200) throw new Error(res.text)
  }
}

export interface Expected {
  id: string
  score: number
}

/**
 * Recommendations computed from the orders alone, without the model: for each product x not bought by the
 * person, the number of (order, product the person bought) pairs where the order holds both; bestsellers
 * (orders holding x) when the person has bought nothing in the shop.
 */
export function expectedFor(
  orders: Order[],
  email: string,
  o: {
    shop: string
    feed: Set<string>
    limit: number
    exclude?: Set<string>
    months?: number[]
  },
): Expected[] {
  const inShop = orders.filter((x) => x.shop === o.shop)
  const bought = new Set(inShop.filter((x) => x.email === email).flatMap((x) => x.codes))
  const counted = inShop.filter((x) => !o.months?.length || o.months.includes(Number(x.at.slice(5, 7))))
  const score = new Map<string, number>()
  for (const order of counted) {
    const codes = new Set(order.codes)
    for (const x of codes) {
      if (bought.has(x)) continue
      const n = bought.size === 0 ? 1 : [...codes].filter((b) => bought.has(b)).length
      if (n > 0) score.set(x, (score.get(x) ?? 0) + n)
    }
  }
  return [...score.entries()]
    .filter(([id]) => o.feed.has(id) && !o.exclude?.has(id))
    .map(([id, s]) => ({ id, score: s }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, o.limit)
}
