import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { queryOne } from '../../core/db/sql.js'
import { runFeedRefresh } from './feed-refresh.js'
import { heurekaFeed, startFeedServer } from './feed-server.test-helpers.js'
import { queueDueFeedRefreshes } from './feeds.jobs.js'

const server = await startFeedServer()
const HOUR = 60 * 60 * 1000

/**
 * FEED_AUTO_REFRESH_HOURS: every feed is downloaded when created and again that many hours after each download
 * began, whatever the plan, and never beside another refresh of the same feed. No worker runs: each test does
 * the scheduler's look and the job's work itself (feeds.routes.test.ts sees the worker download a new feed).
 */
describe('automatic feed downloads', async () => {
  const clock = new ManualClock(new Date('2026-11-23T10:00:00Z'))
  const t = await startTestApp({
    worker: false,
    clock,
    config: { allowPrivateNetwork: true, feedRefreshWaitSeconds: 0, feedAutoRefreshHours: 24 },
  })
  let paths = 0

  async function feedServing(ids: string[], key = t.account.key) {
    const path = `/auto-${++paths}`
    server.serve(path, { body: heurekaFeed(ids.map((id) => ({ id, title: id }))) })
    const res = await t.req('POST', '/feeds', { key, body: { name: path, url: server.url(path) } })
    assert.equal(res.status, 200)
    return { id: res.body.id as number, path }
  }

  const feed = async (id: number, key = t.account.key) => (await t.req('GET', `/feeds/${id}`, { key })).body
  /** Refresh jobs queued for the feed (pg-boss's table), whether run yet or not. */
  const jobs = async (id: number) =>
    (await queryOne<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM pgboss.job
          WHERE name = 'feeds.refresh' AND (data->>'feedId')::int = ${id}`,
    ))!.n

  it('downloads a new feed of any plan, and again a day after, without touching the hourly request limit', async () => {
    const free = await t.createAccount('free')
    const { id, path } = await feedServing(['A'], free.key)
    const made = await feed(id, free.key)
    assert.deepEqual([made.state, made.auto_refresh_at], ['queued', '2026-11-24 10:00:00'])
    assert.equal(await jobs(id), 1, 'queued with the feed')
    assert.equal(await runFeedRefresh(t.ctx, id), 'ok')
    assert.equal(server.hits(path), 1)
    assert.equal((await feed(id, free.key)).item_count, 1)

    clock.advance(23 * HOUR)
    assert.equal(await queueDueFeedRefreshes(t.ctx), 0, 'not due yet')
    server.serve(path, {
      body: heurekaFeed([
        { id: 'A', title: 'A' },
        { id: 'B', title: 'B' },
      ]),
    })
    clock.advance(HOUR + 1000)
    assert.equal(await queueDueFeedRefreshes(t.ctx), 1)
    assert.equal(await queueDueFeedRefreshes(t.ctx), 0, 'due again a day on, not at the next look')
    assert.equal(await jobs(id), 2)
    assert.equal(await runFeedRefresh(t.ctx, id), 'ok')
    const after = await feed(id, free.key)
    assert.deepEqual([after.state, after.item_count, after.refresh_requested_at], ['ok', 2, null])
    assert.equal(after.auto_refresh_at, '2026-11-25 10:00:01', 'a day after this download began')
    assert.equal(server.hits(path), 2)

    // A marketer's request right after an automatic download is not refused by the hour it would have used.
    const own = await feedServing(['M'])
    assert.equal(await runFeedRefresh(t.ctx, own.id), 'ok')
    const asked = await t.req('GET', `/feeds/${own.id}/refresh`)
    assert.equal(asked.status, 200)
    assert.equal(await runFeedRefresh(t.ctx, own.id), 'ok')
    assert.equal(server.hits(own.path), 2)
  })

  it('runs one refresh of a feed at a time, and takes over one whose worker died', async () => {
    const { id, path } = await feedServing(['A'])
    assert.equal(await runFeedRefresh(t.ctx, id), 'ok')
    /** As a download that began now and is still running leaves the feed (its job took it). */
    const runningNow = () =>
      t.ctx.db.execute(
        sql`UPDATE feeds SET state = 'refreshing', refresh_started_at = ${clock.now().toISOString()}::timestamptz
            WHERE id = ${id}`,
      )
    await runningNow()
    // A request while it runs is recorded, queues nothing and leaves the feed to the running refresh.
    const before = await jobs(id)
    assert.equal((await t.req('GET', `/feeds/${id}/refresh`)).status, 200)
    const asked = await feed(id)
    assert.equal(asked.state, 'refreshing')
    assert.notEqual(asked.refresh_requested_at, null)
    assert.equal(await jobs(id), before)
    assert.equal(await runFeedRefresh(t.ctx, id), 'skipped', 'a second job of the same feed')
    // Due while another download runs: the look moves it on a day without queueing it.
    clock.advance(24 * HOUR + 1000)
    await runningNow()
    // (The look queues the first test's feeds, due again too: this one is asserted by its own row and jobs.)
    assert.ok((await queueDueFeedRefreshes(t.ctx)) >= 1)
    assert.equal((await feed(id)).state, 'refreshing')
    assert.equal(await jobs(id), before)
    // Past any refresh's time (FEED_TIMEOUT_SECONDS and the swap's margin), a request takes the feed over.
    clock.advance(t.ctx.config.feedTimeoutSeconds * 1000 + 10 * 60 * 1000 + 1000)
    const hits = server.hits(path)
    assert.equal((await t.req('GET', `/feeds/${id}/refresh`)).status, 200)
    assert.equal((await feed(id)).state, 'queued')
    assert.equal(await jobs(id), before + 1)
    assert.equal(await runFeedRefresh(t.ctx, id), 'ok')
    assert.equal(server.hits(path), hits + 1)
  })

  it('downloads nothing of its own accord when FEED_AUTO_REFRESH_HOURS is 0', async () => {
    const off = { ...t.ctx, config: { ...t.ctx.config, feedAutoRefreshHours: 0 } }
    clock.advance(100 * HOUR)
    assert.equal(await queueDueFeedRefreshes(off), 0)
    // Every feed of the earlier tests is due by now: the same look with the setting on queues them.
    assert.ok((await queueDueFeedRefreshes(t.ctx)) >= 3)
  })
})
