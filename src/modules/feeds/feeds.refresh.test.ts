import http from 'node:http'
import { describe, it } from 'node:test'
import { gzipSync } from 'node:zlib'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import type { OutboundStreamer } from '../../core/net/outbound-stream.js'
import { runFeedRefresh } from './feed-refresh.js'
import {
  csvFeed,
  googleAtom,
  googleRss,
  heurekaFeed,
  startFeedServer,
  streamHeureka,
  type TestItem,
} from './feed-server.test-helpers.js'

const server = await startFeedServer()
/** A body served gzipped as a file (`feed.xml.gz`), not as a content encoding. */
const gzipped = (body: string) => (res: http.ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/gzip' }).end(gzipSync(body))
}
const items = (n: number, prefix = 'P'): TestItem[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `${prefix}${i}`,
    title: `${prefix} product ${i}`,
    price: `${i}.5`,
  }))

describe('feed refresh', async () => {
  const clock = new ManualClock(new Date('2026-11-23T10:00:00Z'))
  // No worker: each test runs the refresh job's work itself, so it knows when it has ended (and the request
  // does not wait for it). The item limit is lowered to stay lean; feeds.routes.test.ts tries the real one.
  // Refreshes on request only: a new feed is not queued (feeds.auto-refresh.test.ts tries the automatic ones).
  const limit = 500
  const t = await startTestApp({
    worker: false,
    clock,
    config: {
      allowPrivateNetwork: true,
      feedRefreshWaitSeconds: 0,
      feedItemLimit: limit,
      feedAutoRefreshHours: 0,
    },
  })
  let paths = 0

  /** A feed served at a fresh path with `answer`; returns its id and path. */
  async function feedServing(answer: Parameters<typeof server.serve>[1], format?: string) {
    const path = `/feed-${++paths}`
    server.serve(path, answer)
    const res = await t.req('POST', '/feeds', { body: { name: path, url: server.url(path), format } })
    assert.equal(res.status, 200)
    assert.equal(res.body.auto_refresh_at, null, 'automatic downloads are off: none is due')
    return { id: res.body.id as number, path }
  }

  /** Asks for a refresh through the API (an hour after the last), then does the job's work. */
  async function refresh(id: number, over: Partial<typeof t.ctx.config> = {}) {
    clock.advance(61 * 60 * 1000)
    assert.equal((await t.req('GET', `/feeds/${id}/refresh`)).status, 200)
    const result = await runFeedRefresh({ ...t.ctx, config: { ...t.ctx.config, ...over } }, id)
    const feed = (await t.req('GET', `/feeds/${id}`)).body
    return { result, feed }
  }

  const productIds = async (id: number) =>
    (
      await queryRows<{ product_id: string }>(
        t.ctx.db,
        sql`SELECT product_id FROM feed_products WHERE feed_id = ${id} ORDER BY product_id`,
      )
    ).map((r) => r.product_id)

  it('reads each format, detected from the file or as given', async () => {
    const bodies = [
      ['heureka', { body: heurekaFeed(items(3)) }],
      ['google', { body: googleRss(items(3)) }],
      ['google', { body: googleAtom(items(3)) }],
      ['csv', { type: 'text/csv', body: csvFeed(items(3), ';') }],
      ['csv', { type: 'text/csv', body: csvFeed(items(3), ',') }],
      ['heureka', gzipped(heurekaFeed(items(3)))],
    ] as const
    for (const [format, answer] of bodies) {
      for (const given of [undefined, format]) {
        const { id } = await feedServing(answer, given)
        const { result, feed } = await refresh(id)
        assert.equal(result, 'ok', `${format} ${feed.error}`)
        assert.equal(feed.state, 'ok')
        assert.equal(feed.format, format)
        assert.equal(feed.item_count, 3)
        assert.deepEqual(await productIds(id), ['P0', 'P1', 'P2'])
        const page = await t.req('GET', `/feeds/${id}/products`)
        assert.deepEqual(
          page.body.data.map((p: { id: string; price: number; url: string }) => [p.id, p.price, p.url]),
          [
            ['P0', 0.5, 'https://shop.example/p/P0'],
            ['P1', 1.5, 'https://shop.example/p/P1'],
            ['P2', 2.5, 'https://shop.example/p/P2'],
          ],
        )
      }
    }
    // The stored rows carry the account and the feed's other fields, for recommenders.
    const { id } = await feedServing({ body: heurekaFeed(items(1)) })
    await refresh(id)
    const row = await queryOne<{ account_id: number; categories: string[]; extra: Record<string, string> }>(
      t.ctx.db,
      sql`SELECT account_id, categories, extra FROM feed_products WHERE feed_id = ${id}`,
    )
    assert.deepEqual(row, {
      account_id: t.account.id,
      categories: ['Home', 'Kitchen'],
      extra: { MANUFACTURER: 'Acme' },
    })
  })

  it('follows redirects (http → https, a CDN), relative ones too', async () => {
    const { path: final } = await feedServing({ body: heurekaFeed(items(3, 'MOVED')) })
    const { path: middle } = await feedServing((res) => void res.writeHead(307, { location: final }).end())
    const { id } = await feedServing((res) => void res.writeHead(301, { location: server.url(middle) }).end())
    assert.equal((await refresh(id)).result, 'ok')
    const ids = await productIds(id)
    assert.equal(ids.length, 3)
    assert.ok(
      ids.every((p) => p.startsWith('MOVED')),
      ids.join(),
    )
  })

  it('replaces all products on a good refresh, and keeps them on every kind of failed one', async () => {
    const { id, path } = await feedServing({ body: heurekaFeed(items(5, 'OLD')) })
    assert.equal((await refresh(id)).result, 'ok')
    const old = await productIds(id)
    assert.equal(old.length, 5)
    const lastRefresh = (await t.req('GET', `/feeds/${id}`)).body.last_refresh

    const failures: [string, Parameters<typeof server.serve>[1], RegExp, Partial<typeof t.ctx.config>?][] = [
      ['malformed XML', { body: '<SHOP><SHOPITEM><ITEM_ID>1</ITEM_ID></SHOP>' }, /not well-formed XML/],
      ['HTTP 404', { status: 404, body: 'gone' }, /answered HTTP 404/],
      ['redirect without a Location', { status: 301, body: '' }, /answered HTTP 301$/],
      ['redirect loop', (res) => void res.writeHead(302, { location: path }).end(), /answered HTTP 302$/],
      ['no products', { body: '<SHOP></SHOP>' }, /no products/],
      ['CSV without an id column', { type: 'text/csv', body: 'name;price\nx;1\n' }, /no id column/],
      [
        'oversized body',
        { body: heurekaFeed(items(200)) },
        /larger than the 10000 bytes allowed/,
        { feedMaxBytes: 10_000 },
      ],
      [
        'slow server',
        (res) => {
          res.writeHead(200, { 'content-type': 'application/xml' })
          res.write('<SHOP>' + heurekaFeed(items(3)).slice(50, 400))
          // …and never ends.
        },
        /did not finish within 0.3 seconds/,
        { feedTimeoutSeconds: 0.3 },
      ],
      [
        'gzip inflating past the limit',
        gzipped(heurekaFeed(items(200))),
        /larger than the 10000 bytes allowed/,
        { feedMaxBytes: 10_000 },
      ],
      [
        'broken gzip',
        (res) => res.writeHead(200).end(Buffer.concat([gzipSync(heurekaFeed(items(50))).subarray(0, 200)])),
        /not valid gzip/,
      ],
      [
        'loopback address without ALLOW_PRIVATE_NETWORK',
        { body: heurekaFeed(items(1)) },
        /private, loopback or link-local/,
        { allowPrivateNetwork: false },
      ],
      [
        'connection dropped mid-file',
        (res) => {
          res.writeHead(200, { 'content-type': 'application/xml' })
          res.write(heurekaFeed(items(3)).slice(0, 300))
          setTimeout(() => res.destroy(), 20)
        },
        /download failed: the connection closed mid-answer/,
      ],
    ]
    for (const [what, answer, reason, over] of failures) {
      server.serve(path, answer)
      const { result, feed } = await refresh(id, over)
      assert.equal(result, 'failed', what)
      assert.equal(feed.state, 'failed', what)
      assert.match(feed.error, reason, what)
      assert.equal(feed.item_count, 5, what)
      assert.equal(feed.last_refresh, lastRefresh, what)
      assert.deepEqual(await productIds(id), old, what)
    }
    const staged = await queryOne<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM feed_products_staging WHERE feed_id = ${id}`,
    )
    assert.equal(staged!.n, 0)

    // A good file again: every old product goes, the new ones come, the error is cleared.
    server.serve(path, { body: googleRss(items(2, 'NEW')) })
    const { result, feed } = await refresh(id)
    assert.equal(result, 'ok')
    assert.equal(feed.error, null)
    assert.equal(feed.format, 'google', 'a detected format is detected again')
    assert.deepEqual(await productIds(id), ['NEW0', 'NEW1'])
  })

  it('fails at the limit-th item, drops the download there, and keeps the previous products', async () => {
    const { id, path } = await feedServing({ body: heurekaFeed(items(3, 'KEEP')) })
    assert.equal((await refresh(id)).result, 'ok')
    // Exactly the limit fails; one fewer is fine (and stored whole).
    server.serve(path, (res) => void streamHeureka(res, limit, { tiny: true }))
    const { result, feed } = await refresh(id)
    assert.equal(result, 'failed')
    assert.equal(
      feed.error,
      `The feed has ${limit} items or more; only feeds with fewer than ${limit} items can be refreshed`,
    )
    assert.equal(feed.item_count, 3)
    assert.deepEqual(await productIds(id), ['KEEP0', 'KEEP1', 'KEEP2'])
    const code = async () =>
      (await queryOne<{ c: string | null }>(
        t.ctx.db,
        sql`SELECT error_code AS c FROM feeds WHERE id = ${id}`,
      ))!.c
    assert.equal(await code(), 'item_limit')

    server.serve(path, (res) => void streamHeureka(res, limit - 1, { tiny: true }))
    assert.equal((await refresh(id)).feed.item_count, limit - 1)
    assert.equal(await code(), null)

    // A far longer file: the refresh stops reading at the limit, long before the server has written it all.
    let written: number | undefined
    const huge = 400 * limit
    server.serve(path, async (res) => void (written = await streamHeureka(res, huge)))
    const cut = await refresh(id)
    assert.equal(cut.result, 'failed')
    assert.equal(cut.feed.item_count, limit - 1)
    for (let i = 0; i < 100 && written === undefined; i++) await new Promise((r) => setTimeout(r, 20))
    assert.ok(written !== undefined && written < huge / 2, `the server wrote ${written} of ${huge} items`)
    const staged = await queryOne<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM feed_products_staging WHERE feed_id = ${id}`,
    )
    assert.equal(staged!.n, 0)
  })

  it("marks a failure of its own as the server's", async () => {
    const { id } = await feedServing({ body: heurekaFeed(items(2)) })
    clock.advance(61 * 60 * 1000)
    assert.equal((await t.req('GET', `/feeds/${id}/refresh`)).status, 200)
    const broken: OutboundStreamer = { open: () => Promise.reject(new Error('a bug of ours')) }
    assert.equal(await runFeedRefresh(t.ctx, id, broken), 'failed')
    const row = await queryOne<{ error: string; error_code: string }>(
      t.ctx.db,
      sql`SELECT error, error_code FROM feeds WHERE id = ${id}`,
    )
    assert.deepEqual(row, {
      error: 'The refresh failed on the server; ask for another one later',
      error_code: 'server',
    })
  })

  it('skips a feed not queued or deleted; a repeated id keeps its last values', async () => {
    const { id, path } = await feedServing({ body: heurekaFeed(items(1)) })
    assert.equal(await runFeedRefresh(t.ctx, id), 'skipped', 'never asked for')
    server.serve(path, { body: heurekaFeed([...items(2), { id: 'P0', title: 'Again' }]) })
    const { feed } = await refresh(id)
    assert.equal(feed.item_count, 2)
    const p0 = await queryOne<{ title: string }>(
      t.ctx.db,
      sql`SELECT title FROM feed_products WHERE feed_id = ${id} AND product_id = 'P0'`,
    )
    assert.equal(p0!.title, 'Again')
    clock.advance(61 * 60 * 1000)
    await t.req('GET', `/feeds/${id}/refresh`)
    await t.req('DELETE', `/feeds/${id}`)
    assert.equal(await runFeedRefresh(t.ctx, id), 'skipped')
  })

  it('reads a given format whatever the file looks like', async () => {
    const { id } = await feedServing({ type: 'text/csv', body: csvFeed(items(2)) }, 'heureka')
    const { result, feed } = await refresh(id)
    assert.equal(result, 'failed')
    assert.match(feed.error, /root element|well-formed/)
    assert.equal(feed.format, 'heureka')
    assert.equal(await runFeedRefresh(t.ctx, id), 'skipped')
  })
})
