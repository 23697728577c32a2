import { setTimeout as sleep } from 'node:timers/promises'
import type { AppContext } from '../../core/context.js'
import { lastPage, toPage } from '../../core/db/pagination.js'
import type { AuthAccount } from '../../core/http/auth.js'
import { fieldError, HttpError, notFound, planRestricted } from '../../core/http/errors.js'
import { sqlDateTime } from '../../core/http/formats.js'
import { parseOutboundUrl, privateTargetError } from '../../core/net/outbound-url.js'
import { itemLimitReason } from './feed-refresh.js'
import { nextAutoRefresh, staleRefreshBefore } from './feed-schedule.js'
import { queueRefresh } from './feeds.jobs.js'
import * as repo from './feeds.repo.js'
import {
  DEFAULT_PRODUCTS_PAGE,
  type CreateFeedBodyT,
  type FeedObjectT,
  type ProductsQueryT,
} from './feeds.schemas.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'config' | 'jobs'>

/** api.md Limits: one refresh per hour. */
export const REFRESH_INTERVAL_MS = 60 * 60 * 1000

export function feedObject(row: repo.FeedRow): FeedObjectT {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    kind: row.kind,
    format: row.format,
    state: row.state,
    error: row.error,
    item_count: row.item_count,
    last_refresh: sqlDateTime(row.refreshed_at),
    refresh_requested_at: sqlDateTime(row.refresh_requested_at),
    auto_refresh_at: sqlDateTime(row.auto_refresh_at),
    created_at: sqlDateTime(row.created_at),
  }
}

export function createFeedService(ctx: Ctx) {
  async function requireFeed(accountId: number, id: number): Promise<repo.FeedRow> {
    const feed = await repo.findFeed(ctx.db, accountId, id)
    if (!feed) throw notFound('Feed not found')
    return feed
  }

  /**
   * The feed once its refresh has ended (state ok or failed), or undefined when it has not within
   * `feedRefreshWaitSeconds` (or was deleted). Polls the row, more slowly as time goes on: the refresh may run
   * in another process, and a row read is the one signal every deployment shares. Real time, not ctx.clock.
   */
  async function waitForOutcome(accountId: number, id: number): Promise<repo.FeedRow | undefined> {
    const deadline = performance.now() + ctx.config.feedRefreshWaitSeconds * 1000
    for (let pause = 50; performance.now() < deadline; pause = Math.min(pause * 2, 500)) {
      await sleep(Math.max(1, Math.min(pause, deadline - performance.now())))
      const row = await repo.findFeed(ctx.db, accountId, id)
      if (!row) return undefined
      if (row.state === 'ok' || row.state === 'failed') return row
    }
    return undefined
  }

  return {
    async create(accountId: number, body: CreateFeedBodyT): Promise<FeedObjectT> {
      const parsed = parseOutboundUrl(body.url.trim())
      if ('error' in parsed) throw fieldError('url', parsed.error)
      // Names are judged again at every download, on the address dialled; this only catches the obvious.
      const privateTarget = privateTargetError(parsed.url, ctx.config.allowPrivateNetwork)
      if (privateTarget) throw fieldError('url', privateTarget)
      const name = body.name.trim()
      if (!name) throw fieldError('name', 'The name field is required.')
      const now = ctx.clock.now()
      const next = nextAutoRefresh(ctx, now)
      // With automatic downloads on, the first one is queued with the feed, whatever the plan: the plan and the
      // hourly limit are the refresh request's, and a feed no one downloads leaves its recommender without products.
      const row = await retriedTransaction(ctx.db, async (tx) => {
        const feed = { name, url: parsed.url.href, kind: body.kind ?? 'product', format: body.format ?? null }
        const inserted = await repo.insertFeed(tx, accountId, feed, now, next)
        if (next) await queueRefresh(ctx, tx, inserted.id)
        return inserted
      })
      return feedObject(row)
    },

    async list(accountId: number): Promise<FeedObjectT[]> {
      return (await repo.listFeeds(ctx.db, accountId)).map(feedObject)
    },

    async get(accountId: number, id: number): Promise<FeedObjectT> {
      return feedObject(await requireFeed(accountId, id))
    },

    async products(accountId: number, id: number, q: ProductsQueryT) {
      const feed = await requireFeed(accountId, id)
      const page = toPage(q.page, q.per_page, DEFAULT_PRODUCTS_PAGE)
      const rows = await repo.productsPage(ctx.db, id, page.perPage, page.offset)
      return {
        current_page: page.page,
        per_page: page.perPage,
        // The count the last good refresh wrote, in the same transaction as the products.
        total: feed.item_count,
        last_page: lastPage(feed.item_count, page.perPage),
        data: rows.map((r) => ({
          id: r.product_id,
          title: r.title,
          url: r.url,
          image: r.image,
          price: r.price === null ? null : Number(r.price),
          categories: r.categories,
        })),
      }
    },

    async remove(accountId: number, id: number) {
      if (!(await repo.deleteFeed(ctx.db, accountId, id))) throw notFound('Feed not found')
      return { deleted: true }
    },

    /**
     * Asks for a refresh (api.md Limits, contract §8) and answers with its outcome when it ends within
     * `feedRefreshWaitSeconds`: the marketer plan only (403); one download per feed and hour (429, counted from
     * the last request that started one, whatever came of it); within the hour after a refresh refused for its
     * item count, 422 at once with the same reason (no download, nothing recorded). The refresh itself runs in
     * a worker, perhaps in another process, so the request watches the feed's row. Ended well: 200; the feed's
     * fault (50,000 items or more, malformed, the download failed): 422 `{errors:{url:[reason]}}` and the
     * previous products stay; still running at the end of the wait: 200 and the feed tells the rest. A request
     * while an automatic download runs is recorded, starts none of its own and is answered that download's outcome.
     */
    async requestRefresh(account: AuthAccount, id: number) {
      if (account.plan !== 'marketer')
        throw planRestricted('Data feed refresh is available on the marketer plan only.')
      const feed = await requireFeed(account.id, id)
      const now = ctx.clock.now()
      const notBefore = new Date(now.getTime() - REFRESH_INTERVAL_MS)
      if (
        feed.state === 'failed' &&
        feed.error_code === 'item_limit' &&
        feed.refresh_requested_at !== null &&
        feed.refresh_requested_at > notBefore
      )
        throw fieldError('url', feed.error ?? itemLimitReason(ctx.config.feedItemLimit))
      const queued = await retriedTransaction(ctx.db, async (tx) => {
        const row = await repo.recordRefreshRequest(
          tx,
          account.id,
          id,
          now,
          notBefore,
          staleRefreshBefore(ctx, now),
        )
        // Still `refreshing`: an automatic download is running, and its outcome answers this request too.
        if (row?.state === 'queued') await queueRefresh(ctx, tx, id)
        return row
      })
      if (!queued) {
        const last = feed.refresh_requested_at?.getTime() ?? now.getTime()
        const retryAfter = Math.max(1, Math.ceil((last + REFRESH_INTERVAL_MS - now.getTime()) / 1000))
        throw new HttpError(
          429,
          { errors: 'The feed can be refreshed once an hour; try again later.' },
          { 'retry-after': String(retryAfter) },
        )
      }
      const ended = await waitForOutcome(account.id, id)
      if (!ended) return { message: 'The feed refresh has been queued.' }
      if (ended.state === 'ok')
        return {
          message: `The feed has been refreshed: ${ended.item_count} product${ended.item_count === 1 ? '' : 's'}.`,
        }
      if (ended.error_code === 'server') throw new Error(`feed ${id}: the refresh failed on the server`)
      throw fieldError('url', ended.error ?? 'The feed could not be refreshed')
    },
  }
}
