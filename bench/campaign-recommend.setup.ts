import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { heurekaFeed } from '../src/modules/feeds/feed-server.test-helpers.js'
import { api } from './lib/measure.js'
import type { ServerProcess } from './lib/server-process.js'

/** Products in the bench feed, and lines per reader's one order (drawn with a popularity skew). */
const PRODUCTS = 2_000
const LINES = 3
const SHOP = 'campaign.bench.example'
const BULK = 1_000

/**
 * Issue 14 item 3: a trained recommender for the campaign bench, built through the API as a shop would:
 * a Heureka feed served from 127.0.0.1, one purchase of LINES products per recipient (transaction-bulk), then
 * POST /recommenders and wait for `ready`. Every recipient is a buyer, so every mail gets personal
 * co-purchase recommendations (the costlier case), not the bestsellers. The server must run with
 * ALLOW_PRIVATE_NETWORK=1. Returns the recommender id; the feed server is closed when the refresh is done.
 */
export async function prepareRecommender(
  server: ServerProcess,
  recipients: number,
  emailOf: (i: number) => string,
): Promise<number> {
  const { url, key } = server
  const body = Buffer.from(
    heurekaFeed(
      Array.from({ length: PRODUCTS }, (_, i) => ({
        id: `sku-${i}`,
        title: `Product ${i}`,
        price: `${(i % 90) + 9.9}`,
      })),
    ),
  )
  const feedServer = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/xml', 'content-length': body.length }).end(body)
  })
  await new Promise<void>((resolve) => feedServer.listen(0, '127.0.0.1', resolve))
  try {
    const { port } = feedServer.address() as AddressInfo
    const feed = (
      await api(url, key, 'POST', '/feeds', { name: 'bench', url: `http://127.0.0.1:${port}/feed.xml` })
    ).json as { id: number }
    await api(url, key, 'GET', `/feeds/${feed.id}/refresh`)
    let state = ''
    // Bounded: two minutes.
    for (let i = 0; i < 1200 && state !== 'ok' && state !== 'failed'; i++) {
      await new Promise((r) => setTimeout(r, 100))
      state = ((await api(url, key, 'GET', `/feeds/${feed.id}`)).json as { state: string }).state
    }
    if (state !== 'ok') throw new Error(`bench feed refresh ended ${state}`)

    // A deterministic skew: low product ids are bought far more often (i² spreads them like real sales).
    const pick = (i: number, j: number) =>
      Math.floor(PRODUCTS * (((i * 7919 + j * 104729) % 1000) / 1000) ** 2)
    for (let i = 0; i < recipients; i += BULK) {
      const transaction_data = Array.from({ length: Math.min(BULK, recipients - i) }, (_, k) => {
        const n = i + k
        return {
          transaction: { order_id: `bench-${n}`, email: emailOf(n), shop: SHOP, amount: 30 },
          transaction_items: Array.from({ length: LINES }, (_, j) => ({
            code: `sku-${pick(n, j)}`,
            title: 'x',
            price: 10,
            amount: 1,
          })),
        }
      })
      const r = await api(url, key, 'POST', '/tracker/transaction-bulk', { transaction_data })
      if (r.status !== 200) throw new Error(`transaction-bulk answered ${r.status}`)
    }
    const created = (await api(url, key, 'POST', '/recommenders', { shop_id: SHOP, feed_id: feed.id }))
      .json as { recommender_id: string }[]
    const id = Number(created[0]!.recommender_id)
    let status = 'created'
    // Bounded: five minutes.
    for (let i = 0; i < 3000 && status !== 'ready' && status !== 'failed'; i++) {
      await new Promise((r) => setTimeout(r, 100))
      status = ((await api(url, key, 'GET', `/recommenders/${id}`)).json as { status: string }).status
    }
    if (status !== 'ready') throw new Error(`bench recommender ended ${status}`)
    // The mail must carry something: a recipient's own recommendations are not empty.
    const sample = (
      await api(
        url,
        key,
        'GET',
        `/recommenders/${id}/recommendations?email=${encodeURIComponent(emailOf(0))}&limit=3`,
      )
    ).json as { products: unknown[] }
    if (sample.products.length !== 3)
      throw new Error(`a recipient gets ${sample.products.length} recommendations`)
    return id
  } finally {
    await new Promise((r) => feedServer.close(r))
  }
}
