/**
 * Recommenders: the resource (create, duplicate, list, get, put, delete, tenancy), training in the
 * background (created → training → ready, failed with a reason, retrained when purchases or settings change,
 * debounced), and recommendations compared with co-purchase counts computed here from the posted orders.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { queryOne } from '../../core/db/sql.js'
import { modelCache } from './recommendation-cache.js'
import { trainDueRecommenders } from './recommender-trainer.js'
import { findRecommender } from './recommenders.repo.js'
import { expectedFor, postOrders, seedFeed, type Order } from './recommenders.test-helpers.js'

const SHOP = 'shop.cz'
const ids = Array.from({ length: 12 }, (_, i) => `p${String(i + 1).padStart(2, '0')}`)
const categoryOf = (id: string) => (Number(id.slice(1)) % 3 === 0 ? ['Home', 'Kitchen'] : ['Garden'])

/** Deterministic orders: 40 people, 3 orders each, 2–4 products (and sometimes one no longer in the feed). */
function makeOrders(): Order[] {
  let seed = 7
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % n
  }
  const orders: Order[] = []
  for (let p = 0; p < 40; p++) {
    for (let k = 0; k < 3; k++) {
      const codes = new Set<string>()
      const size = 2 + rnd(3)
      while (codes.size < size) codes.add(ids[rnd(ids.length)]!)
      if (rnd(5) === 0) codes.add('gone')
      const month = String(1 + ((p + k) % 12)).padStart(2, '0')
      orders.push({
        orderId: `o${p}-${k}`,
        email: `buyer${p}@example.cz`,
        shop: SHOP,
        at: `2026-${month}-10 12:00:00`,
        codes: [...codes],
      })
    }
  }
  // Another shop's orders of the same products must not count.
  for (let k = 0; k < 10; k++)
    orders.push({
      orderId: `x${k}`,
      email: 'buyer0@example.cz',
      shop: 'other.cz',
      at: '2026-05-01 10:00:00',
      codes: ['p01', 'p12'],
    })
  return orders
}

describe('recommenders', async () => {
  const clock = new ManualClock(new Date('2026-11-23T10:00:00Z'))
  const t = await startTestApp({ clock, worker: false })
  const other = await t.createAccount()
  const feed = await seedFeed(
    t,
    t.account.id,
    ids.map((id) => ({ id, categories: categoryOf(id) })),
  )
  const inFeed = new Set(ids)
  const otherFeed = await seedFeed(t, other.id, [{ id: 'p01' }])
  const orders = makeOrders()
  await postOrders(t, t.account, orders)
  const recs = async (id: string, query: string) => {
    const res = await t.req('GET', `/recommenders/${id}/recommendations?${query}`)
    assert.equal(res.status, 200, res.text)
    return (res.body.products as { id: string; score: number }[]).map((p) => ({ id: p.id, score: p.score }))
  }
  let rid = ''

  it('creates a recommender (status created) and refuses a second one for the same shop and feed', async () => {
    const res = await t.req('POST', '/recommenders', { body: { shop_id: SHOP, feed_id: feed } })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.length, 1)
    const [r] = res.body
    rid = r.recommender_id
    assert.equal(typeof rid, 'string')
    assert.deepEqual(
      { ...r, recommender_id: undefined },
      {
        recommender_id: undefined,
        feed_id: feed,
        shop_id: SHOP,
        last_trained_timestamp: null,
        status: 'created',
        settings: { filtered_products: [], filtered_categories: [], included_months: [] },
        error: null,
      },
    )
    // The same shop with blanks around it, as a transaction's shop is stored: the same shop, so refused too.
    for (const shop of [SHOP, ` ${SHOP} `]) {
      const again = await t.req('POST', '/recommenders', { body: { shop_id: shop, feed_id: feed } })
      assert.equal(again.status, 422, shop)
      assert.ok(Array.isArray(again.body.errors) && again.body.errors.length === 1, again.text)
    }
  })

  it("refuses a feed that is not the account's, and bad bodies", async () => {
    const foreign = await t.req('POST', '/recommenders', { body: { shop_id: SHOP, feed_id: otherFeed } })
    assert.equal(foreign.status, 422)
    assert.deepEqual(Object.keys(foreign.body.errors), ['feed_id'])
    for (const body of [{ shop_id: SHOP }, { feed_id: feed }, { shop_id: SHOP, feed_id: 'x' }]) {
      const res = await t.req('POST', '/recommenders', { body })
      assert.equal(res.status, 422, res.text)
    }
  })

  it('lists and shows it; another account sees nothing', async () => {
    const list = await t.req('GET', '/recommenders')
    assert.deepEqual(
      list.body.map((r: { recommender_id: string }) => r.recommender_id),
      [rid],
    )
    assert.equal((await t.req('GET', `/recommenders/${rid}`)).body.shop_id, SHOP)
    assert.deepEqual((await t.req('GET', '/recommenders', { key: other.key })).body, [])
    for (const [method, path] of [
      ['GET', `/recommenders/${rid}`],
      ['GET', `/recommenders/${rid}/recommendations`],
      ['DELETE', `/recommenders/${rid}`],
    ] as const) {
      assert.equal((await t.req(method, path, { key: other.key })).status, 404)
    }
    const put = await t.req('PUT', `/recommenders/${rid}`, { key: other.key, body: { settings: {} } })
    assert.equal(put.status, 404)
    assert.equal((await t.req('GET', '/recommenders/999999')).status, 404)
  })

  it('trains in the background: created → ready, with a training time', async () => {
    assert.equal(await trainDueRecommenders(t.ctx), 1)
    const r = (await t.req('GET', `/recommenders/${rid}`)).body
    assert.equal(r.status, 'ready')
    assert.equal(r.last_trained_timestamp, '2026-11-23 10:00:00')
    assert.equal(await trainDueRecommenders(t.ctx), 0, 'nothing changed: not trained again')
    // The purchases were analyzed with the model: without statistics a mail batch's purchase read was planned
    // as a scan of the shop's orders per person (PostgreSQL's autovacuum may be off; PGlite has none).
    const stats = await queryOne<{ tuples: number }>(
      t.ctx.db,
      sql`SELECT reltuples::float8 AS tuples FROM pg_class WHERE relname = 'transactions'`,
    )
    assert.equal(stats?.tuples, orders.length)
  })

  it('reads a freshly trained model once for requests that arrive together', async () => {
    // Nothing has recommended from this model yet: the three calls find no cache and meet one read of it.
    const model = (await findRecommender(t.ctx.db, t.account.id, Number(rid)))!
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => modelCache(t.ctx.db, model)))
    assert.ok(a === b && b === c, 'one cache for the three')
    assert.equal(await modelCache(t.ctx.db, model), a, 'kept for the next request')
  })

  it('recommends what was bought with their purchases, never what they bought, only feed products', async () => {
    for (const p of [0, 1, 7, 23, 39]) {
      const email = `buyer${p}@example.cz`
      for (const limit of [5, 50]) {
        const got = await recs(rid, `email=${encodeURIComponent(email.toUpperCase())}&limit=${limit}`)
        assert.deepEqual(got, expectedFor(orders, email, { shop: SHOP, feed: inFeed, limit }), email)
        const bought = new Set(
          orders.filter((o) => o.email === email && o.shop === SHOP).flatMap((o) => o.codes),
        )
        assert.ok(got.length > 0 && got.every((g) => !bought.has(g.id) && inFeed.has(g.id)))
      }
    }
    const full = (await t.req('GET', `/recommenders/${rid}/recommendations?email=nobody@example.cz`)).body
    assert.equal(full.products.length, 5, 'five by default')
    assert.deepEqual(Object.keys(full.products[0]).sort(), ['id', 'image', 'price', 'score', 'title', 'url'])
    assert.equal(full.products[0].price, 199.9)
    assert.equal(full.products[0].url, `https://shop.example/p/${full.products[0].id}`)
  })

  it('offers bestsellers to a person without purchases in the shop', async () => {
    const expected = expectedFor(orders, 'nobody@example.cz', { shop: SHOP, feed: inFeed, limit: 7 })
    assert.deepEqual(await recs(rid, 'email=nobody@example.cz&limit=7'), expected)
    assert.deepEqual(await recs(rid, 'limit=7'), expected, 'no email: bestsellers')
  })

  it('refuses a limit over 50 and a bad one', async () => {
    for (const q of ['limit=51', 'limit=0', 'limit=x'])
      assert.equal((await t.req('GET', `/recommenders/${rid}/recommendations?${q}`)).status, 422, q)
  })

  it('leaves out filtered products and categories at once, without retraining', async () => {
    const res = await t.req('PUT', `/recommenders/${rid}`, {
      body: { settings: { filtered_products: ['p02', 'p05'], filtered_categories: ['Kitchen'] } },
    })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.status, 'ready')
    assert.deepEqual(res.body.settings, {
      filtered_products: ['p02', 'p05'],
      filtered_categories: ['Kitchen'],
      included_months: [],
    })
    const exclude = new Set(['p02', 'p05', ...ids.filter((id) => categoryOf(id).includes('Kitchen'))])
    for (const email of ['buyer3@example.cz', 'nobody@example.cz']) {
      const got = await recs(rid, `email=${email}&limit=50`)
      assert.deepEqual(got, expectedFor(orders, email, { shop: SHOP, feed: inFeed, limit: 50, exclude }))
      assert.ok(got.every((g) => !exclude.has(g.id)))
    }
    assert.equal(await trainDueRecommenders(t.ctx), 0)
  })

  it('validates settings', async () => {
    for (const settings of [
      { included_months: [13] },
      { included_months: [1, 1] },
      { filtered_categories: [{ name: 'x' }] },
      { filtered_products: 'x'.repeat(300) },
    ]) {
      const res = await t.req('PUT', `/recommenders/${rid}`, { body: { settings } })
      assert.equal(res.status, 422, JSON.stringify(settings))
    }
    assert.equal((await t.req('PUT', `/recommenders/${rid}`, { body: {} })).status, 422)
  })

  it('retrains on included_months, learning only from purchases in those months', async () => {
    const res = await t.req('PUT', `/recommenders/${rid}`, {
      body: { settings: { filtered_products: [], filtered_categories: [], included_months: [3, 4, 5] } },
    })
    assert.equal(res.body.status, 'created')
    clock.advance(1000)
    assert.equal(await trainDueRecommenders(t.ctx), 1)
    assert.equal((await t.req('GET', `/recommenders/${rid}`)).body.status, 'ready')
    for (const email of ['buyer2@example.cz', 'buyer3@example.cz', 'nobody@example.cz']) {
      const got = await recs(rid, `email=${email}&limit=50`)
      assert.deepEqual(
        got,
        expectedFor(orders, email, { shop: SHOP, feed: inFeed, limit: 50, months: [3, 4, 5] }),
      )
    }
  })

  it('retrains when purchases change, at most once a minute', async () => {
    const fresh: Order = {
      orderId: 'late',
      email: 'newbie@example.cz',
      shop: SHOP,
      at: '2026-04-02 09:00:00',
      codes: ['p11', 'p12'],
    }
    await postOrders(t, t.account, [fresh])
    assert.equal(await trainDueRecommenders(t.ctx), 0, 'debounced: last attempt under a minute ago')
    clock.advance(61_000)
    assert.equal(await trainDueRecommenders(t.ctx), 1)
    const all = [...orders, fresh]
    const got = await recs(rid, 'email=newbie@example.cz&limit=50')
    assert.deepEqual(
      got,
      expectedFor(all, 'newbie@example.cz', { shop: SHOP, feed: inFeed, limit: 50, months: [3, 4, 5] }),
    )
    assert.equal(
      (await t.req('GET', `/recommenders/${rid}`)).body.last_trained_timestamp,
      '2026-11-23 10:01:02',
    )
  })

  it('retrains when an order is overwritten, by PUT or sent again in a bulk', async () => {
    const expected = (late: Order) =>
      expectedFor([...orders, late], late.email, { shop: SHOP, feed: inFeed, limit: 50, months: [3, 4, 5] })
    const late: Order = {
      orderId: 'late',
      email: 'newbie@example.cz',
      shop: SHOP,
      at: '2026-04-02 09:00:00',
      codes: ['p01', 'p02'],
    }
    const put = await t.req('PUT', '/tracker/transaction/late', {
      body: {
        transaction: {
          order_id: late.orderId,
          email: late.email,
          shop: SHOP,
          amount: 10,
          timestamp: late.at,
        },
        transaction_items: late.codes.map((code) => ({ code, title: code, price: 5, amount: 1 })),
      },
    })
    assert.equal(put.status, 200, put.text)
    clock.advance(61_000)
    assert.equal(await trainDueRecommenders(t.ctx), 1)
    assert.deepEqual(await recs(rid, 'email=newbie@example.cz&limit=50'), expected(late))
    const again = { ...late, codes: ['p05', 'p06'] }
    await postOrders(t, t.account, [again])
    clock.advance(61_000)
    assert.equal(await trainDueRecommenders(t.ctx), 1)
    assert.deepEqual(await recs(rid, 'email=newbie@example.cz&limit=50'), expected(again))
    assert.notDeepEqual(expected(again), expected(late))
  })

  it('fails with a reason while its feed has no products, and trains once it has', async () => {
    const empty = await seedFeed(t, t.account.id, [])
    const created = await t.req('POST', '/recommenders', { body: { shop_id: SHOP, feed_id: empty } })
    const id = created.body[0].recommender_id as string
    clock.advance(61_000)
    await trainDueRecommenders(t.ctx)
    const failed = (await t.req('GET', `/recommenders/${id}`)).body
    assert.equal(failed.status, 'failed')
    assert.match(failed.error, /no products/)
    assert.deepEqual(await recs(id, 'email=buyer1@example.cz'), [])
    await t.ctx.db.execute(
      sql`INSERT INTO feed_products (feed_id, product_id, account_id, title) VALUES (${empty}, 'p01', ${t.account.id}, 'One')`,
    )
    clock.advance(61_000)
    await trainDueRecommenders(t.ctx)
    const ready = (await t.req('GET', `/recommenders/${id}`)).body
    assert.equal(ready.status, 'ready')
    assert.equal(ready.error, null)
    assert.deepEqual(
      (await recs(id, 'email=nobody@example.cz')).map((p) => p.id),
      ['p01'],
    )
  })

  it('follows a feed refresh at once: a product gone from the feed is no longer offered', async () => {
    // The model's parts are kept in the process (recommendation-cache.ts): a refresh must reach them.
    const before = await recs(rid, 'email=nobody@example.cz&limit=5')
    const gone = before[0]!.id
    await t.ctx.db.transaction(async (tx) => {
      await tx.execute(sql`DELETE FROM feed_products WHERE feed_id = ${feed} AND product_id = ${gone}`)
      await tx.execute(sql`UPDATE feeds SET refreshed_at = now() WHERE id = ${feed}`)
    })
    const after = await recs(rid, 'email=nobody@example.cz&limit=5')
    assert.ok(!after.some((p) => p.id === gone), `${gone} left the feed`)
    assert.deepEqual(after.slice(0, 4), before.slice(1))
  })

  it('deletes it with its model', async () => {
    const res = await t.req('DELETE', `/recommenders/${rid}`)
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { deleted: true })
    assert.equal((await t.req('GET', `/recommenders/${rid}`)).status, 404)
    const left = await queryOne<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM recommender_pairs WHERE recommender_id = ${Number(rid)}`,
    )
    assert.equal(left?.n, 0)
    assert.equal((await t.req('DELETE', `/recommenders/${rid}`)).status, 404)
  })
})
