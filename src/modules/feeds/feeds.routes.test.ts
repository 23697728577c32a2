import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { queryOne } from '../../core/db/sql.js'
import { FEED_ITEM_LIMIT } from './feed-refresh.js'
import { heurekaFeed, startFeedServer, streamHeureka } from './feed-server.test-helpers.js'

const server = await startFeedServer()
server.serve('/shop.xml', {
  body: heurekaFeed(
    Array.from({ length: 25 }, (_, i) => ({ id: `P${String(i).padStart(2, '0')}`, title: `Product ${i}` })),
  ),
})

describe('feed routes', async () => {
  const clock = new ManualClock(new Date('2026-11-23T10:00:00Z'))
  // The worker runs: a refresh goes through the job queue, and the request waits for it, as a client sees it.
  // The wait is longer than the default so that a loaded machine does not turn an outcome into "queued".
  const t = await startTestApp({ clock, config: { allowPrivateNetwork: true, feedRefreshWaitSeconds: 60 } })

  const create = async (over: Record<string, unknown> = {}, key = t.account.key) =>
    t.req('POST', '/feeds', { key, body: { name: 'Shop', url: server.url('/shop.xml'), ...over } })

  /** Polls the feed until its refresh has ended; bounded (the job queue polls every half second). */
  async function settled(id: number, key = t.account.key) {
    for (let i = 0; i < 100; i++) {
      const feed = (await t.req('GET', `/feeds/${id}`, { key })).body as {
        state: string
        item_count: number
        refresh_requested_at: string | null
      }
      if (feed.state === 'ok' || feed.state === 'failed') return feed
      await new Promise((r) => setTimeout(r, 100))
    }
    throw new Error('the refresh did not end within 10 s')
  }

  it('creates, lists, shows and deletes feeds, each account its own', async () => {
    const res = await create({ kind: 'product', format: 'heureka' })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, {
      id: res.body.id,
      name: 'Shop',
      url: server.url('/shop.xml'),
      kind: 'product',
      format: 'heureka',
      // Its first download is queued with it (FEED_AUTO_REFRESH_HOURS).
      state: 'queued',
      error: null,
      item_count: 0,
      last_refresh: null,
      refresh_requested_at: null,
      auto_refresh_at: '2026-11-24 10:00:00',
      created_at: '2026-11-23 10:00:00',
    })
    const id = res.body.id as number
    const plain = await create({ name: 'Data' })
    assert.equal(plain.body.kind, 'product')
    assert.equal(plain.body.format, null)
    const list = await t.req('GET', '/feeds')
    assert.deepEqual(
      list.body.map((f: { id: number }) => f.id),
      [id, plain.body.id],
    )
    // Shown as created, once its first download (the shop's 25 products) has ended.
    assert.deepEqual(await settled(id), {
      ...res.body,
      state: 'ok',
      item_count: 25,
      last_refresh: '2026-11-23 10:00:00',
    })

    const other = await t.createAccount()
    assert.equal((await t.req('GET', `/feeds/${id}`, { key: other.key })).status, 404)
    assert.deepEqual((await t.req('GET', '/feeds', { key: other.key })).body, [])
    assert.equal((await t.req('DELETE', `/feeds/${id}`, { key: other.key })).status, 404)
    assert.equal((await t.req('GET', `/feeds/${id}/products`, { key: other.key })).status, 404)

    assert.deepEqual((await t.req('DELETE', `/feeds/${id}`)).body, { deleted: true })
    const gone = await t.req('GET', `/feeds/${id}`)
    assert.equal(gone.status, 404)
    assert.equal(typeof gone.body.message, 'string')
  })

  it('validates the body: the url must be http(s), the kind and format known', async () => {
    for (const url of ['ftp://shop.example/feed.xml', 'not a url', 'https://user:pw@shop.example/f.xml']) {
      const res = await create({ url })
      assert.equal(res.status, 422, url)
      assert.deepEqual(Object.keys(res.body.errors), ['url'])
    }
    assert.deepEqual(Object.keys((await create({ kind: 'other' })).body.errors), ['kind'])
    assert.deepEqual(Object.keys((await create({ format: 'json' })).body.errors), ['format'])
    assert.deepEqual(Object.keys((await create({ name: undefined })).body.errors), ['name'])
  })

  it('refreshes in the background through either path and pages the products', async () => {
    const id = (await create()).body.id as number
    const res = await t.req('GET', `/data-feeds/${id}/refresh`)
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { message: 'The feed has been refreshed: 25 products.' })
    const feed = await settled(id)
    assert.deepEqual(
      { ...feed, id: 0 },
      {
        id: 0,
        name: 'Shop',
        url: server.url('/shop.xml'),
        kind: 'product',
        format: 'heureka',
        state: 'ok',
        error: null,
        item_count: 25,
        last_refresh: '2026-11-23 10:00:00',
        refresh_requested_at: '2026-11-23 10:00:00',
        auto_refresh_at: '2026-11-24 10:00:00',
        created_at: '2026-11-23 10:00:00',
      },
    )
    const page = await t.req('GET', `/feeds/${id}/products?page=2&per_page=10`)
    assert.equal(page.status, 200)
    assert.deepEqual(
      { ...page.body, data: page.body.data.map((p: { id: string }) => p.id) },
      {
        current_page: 2,
        per_page: 10,
        total: 25,
        last_page: 3,
        data: ['P10', 'P11', 'P12', 'P13', 'P14', 'P15', 'P16', 'P17', 'P18', 'P19'],
      },
    )
    assert.deepEqual(page.body.data[0], {
      id: 'P10',
      title: 'Product 10',
      url: 'https://shop.example/p/P10',
      image: 'https://shop.example/i/P10.jpg',
      price: 100,
      categories: ['Home', 'Kitchen'],
    })
    assert.equal((await t.req('GET', `/feeds/${id}/products?per_page=5001`)).status, 422)
    const first = await t.req('GET', `/feeds/${id}/products`)
    assert.equal(first.body.per_page, 20)
    assert.equal(first.body.data.length, 20)

    // Deleting the feed takes its products along.
    await t.req('DELETE', `/feeds/${id}`)
    const left = await queryOne<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM feed_products WHERE feed_id = ${id}`,
    )
    assert.equal(left!.n, 0)
  })

  it("refreshes one feed while another's server holds its answer", async () => {
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    let reached = () => {}
    const asked = new Promise<void>((resolve) => (reached = resolve))
    server.serve('/held.xml', async (res) => {
      reached()
      await held
      res.writeHead(200, { 'content-type': 'application/xml' }).end(heurekaFeed([{ id: 'H', title: 'Held' }]))
    })
    const slow = (await create({ url: server.url('/held.xml') })).body.id as number
    const fast = (await create()).body.id as number
    const slowRefresh = t.req('GET', `/feeds/${slow}/refresh`)
    try {
      await Promise.race([
        asked,
        new Promise((_, fail) => setTimeout(() => fail(new Error('never asked')), 20_000)),
      ])
      const res = await t.req('GET', `/feeds/${fast}/refresh`)
      assert.deepEqual(res.body, { message: 'The feed has been refreshed: 25 products.' })
    } finally {
      release()
    }
    assert.deepEqual((await slowRefresh).body, { message: 'The feed has been refreshed: 1 product.' })
  })

  it('allows one refresh request an hour (429 {errors}), on the marketer plan only (403 {errors})', async () => {
    const id = (await create()).body.id as number
    assert.equal((await t.req('GET', `/feeds/${id}/refresh`)).status, 200)
    clock.advance(59 * 60 * 1000)
    const again = await t.req('GET', `/feeds/${id}/refresh`)
    assert.equal(again.status, 429)
    assert.equal(typeof again.body.errors, 'string')
    assert.equal(again.headers['retry-after'], '60')
    assert.equal(again.headers['content-type'], 'application/json')
    // The other path is the same operation, under the same limit.
    assert.equal((await t.req('GET', `/data-feeds/${id}/refresh`)).status, 429)
    clock.advance(61 * 1000)
    assert.equal((await t.req('GET', `/data-feeds/${id}/refresh`)).status, 200)
    await settled(id)

    for (const plan of ['free', 'paid'] as const) {
      const account = await t.createAccount(plan)
      const own = (await create({}, account.key)).body.id as number
      const res = await t.req('GET', `/feeds/${own}/refresh`, { key: account.key })
      assert.equal(res.status, 403, plan)
      assert.equal(typeof res.body.errors, 'string')
      // Refused the request, yet downloaded of the worker's accord, as every plan's feeds are.
      const feed = await settled(own, account.key)
      assert.deepEqual([feed.state, feed.item_count, feed.refresh_requested_at], ['ok', 25, null], plan)
    }
    assert.equal((await t.req('GET', '/feeds/999999/refresh')).status, 404)
  })

  it(`answers 422 for a feed of ${FEED_ITEM_LIMIT} items, keeps the products, and refuses it at once within the hour`, async () => {
    assert.equal(t.ctx.config.feedItemLimit, FEED_ITEM_LIMIT, 'the real limit, once')
    const path = '/big.xml'
    server.serve(path, {
      body: heurekaFeed([
        { id: 'KEEP1', title: 'Kept' },
        { id: 'KEEP2', title: 'Kept' },
      ]),
    })
    const id = (await create({ url: server.url(path) })).body.id as number
    assert.deepEqual((await t.req('GET', `/feeds/${id}/refresh`)).body, {
      message: 'The feed has been refreshed: 2 products.',
    })
    const ids = async () =>
      (await t.req('GET', `/feeds/${id}/products`)).body.data.map((p: { id: string }) => p.id)

    clock.advance(61 * 60 * 1000)
    server.serve(path, (res) => void streamHeureka(res, FEED_ITEM_LIMIT, { tiny: true }))
    const over = await t.req('GET', `/data-feeds/${id}/refresh`)
    const reason = `The feed has ${FEED_ITEM_LIMIT} items or more; only feeds with fewer than ${FEED_ITEM_LIMIT} items can be refreshed`
    assert.equal(over.status, 422)
    assert.equal(over.headers['content-type'], 'application/json')
    assert.deepEqual(over.body, { errors: { url: [reason] } })
    assert.deepEqual(await ids(), ['KEEP1', 'KEEP2'])
    const failed = (await t.req('GET', `/feeds/${id}`)).body
    assert.equal(failed.state, 'failed')
    assert.equal(failed.error, reason)
    assert.equal(failed.item_count, 2)

    // Within the hour: the same 422 at once, with no download, and the hour still counts from the last one.
    const downloads = server.hits(path)
    clock.advance(30 * 60 * 1000)
    assert.deepEqual((await t.req('GET', `/feeds/${id}/refresh`)).body, { errors: { url: [reason] } })
    assert.equal(server.hits(path), downloads)
    assert.equal((await t.req('GET', `/feeds/${id}`)).body.refresh_requested_at, failed.refresh_requested_at)

    // An hour after that download the feed is read again: fixed by now, it replaces the products.
    clock.advance(31 * 60 * 1000)
    server.serve(path, { body: heurekaFeed([{ id: 'NEW1', title: 'New' }]) })
    assert.deepEqual((await t.req('GET', `/feeds/${id}/refresh`)).body, {
      message: 'The feed has been refreshed: 1 product.',
    })
    assert.deepEqual(await ids(), ['NEW1'])
  })

  it('answers 422 {errors:{url}} for a malformed feed or a failed download; a later hour may try again', async () => {
    server.serve('/bad.xml', { body: '<SHOP><SHOPITEM><ITEM_ID>1</ITEM_ID></SHOP>' })
    const id = (await create({ url: server.url('/bad.xml') })).body.id as number
    const bad = await t.req('GET', `/feeds/${id}/refresh`)
    assert.equal(bad.status, 422)
    assert.deepEqual(Object.keys(bad.body.errors), ['url'])
    assert.match(bad.body.errors.url[0], /not well-formed XML/)
    // Not the item limit: within the hour it is the hourly limit that answers.
    assert.equal((await t.req('GET', `/feeds/${id}/refresh`)).status, 429)

    clock.advance(61 * 60 * 1000)
    server.serve('/bad.xml', { status: 404, body: 'gone' })
    const gone = await t.req('GET', `/feeds/${id}/refresh`)
    assert.equal(gone.status, 422)
    assert.deepEqual(gone.body, { errors: { url: ['The feed URL answered HTTP 404'] } })
  })
})
