import autocannon from 'autocannon'
import { openDatabase, type DbHandle } from '../src/core/db/client.js'
import { accountOfKey, serverDatabaseUrl } from './campaign-stats.bench.js'
import { api, round } from './lib/measure.js'
import type { ServerProcess } from './lib/server-process.js'

/**
 * Issue 14: a recommender trained on BENCH_RECS_ITEMS transaction items (default 1,000,000) over
 * BENCH_RECS_PRODUCTS products (default 10,000), bar ≤ 60 s on PostgreSQL; then the latency of
 * `GET /recommenders/{id}/recommendations` at 64 connections, for buyers (co-purchases) and for people without
 * purchases (bestsellers). The data is generated with set-based SQL straight into the server's database:
 * orders of 1–7 lines (4 on average), products drawn with a popularity skew, 4 orders per buyer.
 */
export interface RecommendersFigures {
  items: number
  orders: number
  products: number
  seedSeconds: number
  /** From POST /recommenders to status `ready`, as the server's own trainer does it. */
  trainSeconds: number
  pairs: number
  buyers: { reqPerSec: number; p99Ms: number; p50Ms: number; non2xx: number; errors: number }
  strangers: { reqPerSec: number; p99Ms: number; p50Ms: number; non2xx: number; errors: number }
  sample: unknown
}

const SHOP = 'bench.example'

export async function seed(db: DbHandle, accountId: number, items: number, products: number) {
  const orders = Math.round(items / 4)
  const feed = await db.executeSql(
    `INSERT INTO feeds (account_id, name, url, state, refreshed_at, item_count)
     VALUES ($1, 'Bench', 'http://127.0.0.1:9/feed.xml', 'ok', now(), $2) RETURNING id`,
    [accountId, products],
  )
  const feedId = Number(feed.rows[0]!.id)
  await db.executeSql(
    `INSERT INTO feed_products (feed_id, product_id, account_id, title, url, image, price, categories)
     SELECT $1, 'p' || g, $2, 'Product ' || g, 'https://shop.example/p/' || g, 'https://shop.example/i/' || g || '.jpg',
            (g % 500) + 0.99, jsonb_build_array('Cat ' || (g % 40))
     FROM generate_series(0, $3 - 1) g`,
    [feedId, accountId, products],
  )
  await db.executeSql(
    `INSERT INTO transactions (account_id, order_id, email, shop, amount, occurred_at)
     SELECT $1, 'o' || g, 'buyer' || (g % $3) || '@bench.example', $4, 100, now() - (g % 365) * interval '1 day'
     FROM generate_series(1, $2) g`,
    [accountId, orders, Math.max(1, Math.round(orders / 4)), SHOP],
  )
  // Lines per order: 1 + (hash % 7), 4 on average; products skewed towards low ids (random()^2).
  await db.executeSql(
    `INSERT INTO transaction_items (account_id, transaction_id, shop, position, code, title, price, amount)
     SELECT $1, t.id, $2, pos, 'p' || floor($3 * random() ^ 2)::int, 'x', 10, 1
     FROM transactions t
     CROSS JOIN LATERAL generate_series(1, 1 + (t.id * 7919) % 7) pos
     WHERE t.account_id = $1`,
    [accountId, SHOP, products],
  )
  await db.executeSql('ANALYZE transactions, transaction_items, feed_products')
  const n = await db.executeSql('SELECT count(*)::int AS n FROM transaction_items WHERE account_id = $1', [
    accountId,
  ])
  return { feedId, orders, items: Number(n.rows[0]!.n), buyers: Math.max(1, Math.round(orders / 4)) }
}

async function latency(url: string, key: string, paths: () => string, seconds: number) {
  const r = await autocannon({
    url,
    headers: { key },
    connections: 64,
    duration: seconds,
    pipelining: 1,
    requests: [{ setupRequest: (req) => ({ ...req, path: paths() }) }],
  })
  return {
    reqPerSec: Math.round(r.requests.average),
    p99Ms: r.latency.p99,
    p50Ms: r.latency.p50,
    non2xx: r.non2xx,
    errors: r.errors,
  }
}

export async function benchRecommenders(
  server: ServerProcess,
  pgServerUrl: string,
  seconds: number,
): Promise<RecommendersFigures> {
  const wantedItems = Number(process.env.BENCH_RECS_ITEMS ?? 1_000_000)
  const products = Number(process.env.BENCH_RECS_PRODUCTS ?? 10_000)
  const db = await openDatabase({ databaseUrl: serverDatabaseUrl(pgServerUrl, server), poolSize: 2 })
  try {
    const accountId = await accountOfKey(db, server.key)
    const t0 = process.hrtime.bigint()
    const seeded = await seed(db, accountId, wantedItems, products)
    const seedSeconds = Number(process.hrtime.bigint() - t0) / 1e9
    const { url, key } = server
    const t1 = process.hrtime.bigint()
    const created = (await api(url, key, 'POST', '/recommenders', { shop_id: SHOP, feed_id: seeded.feedId }))
      .json as { recommender_id: string }[]
    const id = created[0]!.recommender_id
    let status = 'created'
    // Bounded: the bar is 60 s; give it five times that before calling it failed.
    const deadline = Date.now() + 300_000
    while (status !== 'ready' && status !== 'failed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100))
      status = ((await api(url, key, 'GET', `/recommenders/${id}`)).json as { status: string }).status
    }
    if (status !== 'ready') throw new Error(`recommender ended ${status}`)
    const trainSeconds = Number(process.hrtime.bigint() - t1) / 1e9
    const pairs = await db.executeSql(
      'SELECT count(*)::int AS n FROM recommender_pairs WHERE recommender_id = $1',
      [Number(id)],
    )
    let i = 0
    const path = `/recommenders/${id}/recommendations`
    const buyers = await latency(
      url,
      key,
      () => `${path}?email=buyer${(i++ * 7919) % seeded.buyers}@bench.example&limit=5`,
      seconds,
    )
    const strangers = await latency(
      url,
      key,
      () => `${path}?email=nobody${i++}@bench.example&limit=5`,
      seconds,
    )
    const sample = (await api(url, key, 'GET', `${path}?email=buyer1@bench.example&limit=3`)).json
    return {
      items: seeded.items,
      orders: seeded.orders,
      products,
      seedSeconds: round(seedSeconds),
      trainSeconds: round(trainSeconds, 2),
      pairs: Number(pairs.rows[0]!.n),
      buyers,
      strangers,
      sample,
    }
  } finally {
    await db.close()
  }
}
