import type { AppContext } from '../../core/context.js'
import { OutboundError } from '../../core/net/outbound.js'
import {
  createOutboundStreamer,
  type OutboundStreamer,
  type StreamResponse,
} from '../../core/net/outbound-stream.js'
import { FeedParseError, type FeedProduct } from './feed-product.js'
import { contentTypeCharset } from './feed-charset.js'
import { gunzipIfCompressed } from './feed-gunzip.js'
import { parseFeed } from './feed-parse.js'
import { nextAutoRefresh, staleRefreshBefore } from './feed-schedule.js'
import type { FeedErrorCode, FeedFormat } from './feeds.table.js'
import * as repo from './feeds.repo.js'
import { retriedTransaction } from '../../core/db/retry.js'

/** api.md Limits: only feeds with fewer than 50,000 items can be refreshed (config `feedItemLimit`). */
export const FEED_ITEM_LIMIT = 50_000
/** Products staged per statement. */
const STAGE_BATCH = 1000

type Ctx = Pick<AppContext, 'db' | 'clock' | 'config' | 'log'>

/** A refresh that cannot go on, with the reason the feed will show and its kind. */
class RefreshFailure extends Error {
  constructor(
    message: string,
    readonly code: FeedErrorCode = 'bad_feed',
  ) {
    super(message)
  }
}

/** The refusal of a feed with too many items, as the feed shows it and the refresh request answers it. */
export function itemLimitReason(limit: number): string {
  return `The feed has ${limit} items or more; only feeds with fewer than ${limit} items can be refreshed`
}

export function createFeedStreamer(ctx: Pick<AppContext, 'config'>): OutboundStreamer {
  return createOutboundStreamer({
    allowPrivateNetwork: ctx.config.allowPrivateNetwork,
    userAgent: 'Tidings feed',
  })
}

/** The reason shown on the feed: never a stack, never the URL (the customer knows it). */
function reasonOf(err: unknown, ctx: Ctx): { reason: string; code: FeedErrorCode } | undefined {
  if (err instanceof RefreshFailure) return { reason: err.message, code: err.code }
  if (err instanceof FeedParseError) return { reason: err.message, code: 'bad_feed' }
  if (err instanceof OutboundError) {
    const reason = (() => {
      switch (err.code) {
        case 'timeout':
          return `The download did not finish within ${ctx.config.feedTimeoutSeconds} seconds`
        case 'too_large':
          return `The feed is larger than the ${ctx.config.feedMaxBytes} bytes allowed`
        case 'forbidden_address':
          return 'The feed URL points to a private, loopback or link-local address'
        case 'invalid_url':
          return err.message
        default:
          return `The download failed: ${err.message}`
      }
    })()
    return { reason, code: 'bad_feed' }
  }
  return undefined
}

/** Redirects followed for a feed (http → https, a CDN, a renamed export): more is a loop. */
const MAX_REDIRECTS = 5
const REDIRECTS = new Set([301, 302, 303, 307, 308])

/**
 * The feed's answer, after up to MAX_REDIRECTS redirects: shops move their exports (http → https, a CDN), and
 * every hop is a new request under the same rules (http(s), the address rule in the socket's lookup) and the
 * one time limit. A redirect without a Location, or one too many, is the answer as it came.
 */
async function openFollowingRedirects(
  ctx: Ctx,
  streamer: OutboundStreamer,
  url: string,
): Promise<StreamResponse> {
  const deadline = performance.now() + ctx.config.feedTimeoutSeconds * 1000
  for (let hop = 0; ; hop++) {
    const res = await streamer.open({
      url,
      timeoutMs: Math.max(1, Math.round(deadline - performance.now())),
      maxBytes: ctx.config.feedMaxBytes,
      headers: { accept: 'application/xml, text/xml, application/rss+xml, text/csv, */*;q=0.5' },
    })
    const location = res.headers.location
    if (!REDIRECTS.has(res.status) || !location || hop === MAX_REDIRECTS) return res
    res.close()
    try {
      url = new URL(location, url).toString()
    } catch {
      throw new RefreshFailure(`The feed URL redirected to "${location.slice(0, 200)}", which is no URL`)
    }
  }
}

/**
 * Downloads and reads a queued feed, and replaces its products when the whole file was good: the products
 * are staged in batches as they are parsed (memory holds one batch), then swapped in by one transaction.
 * A failed download, a malformed file, `feedItemLimit` (50,000) items or more, or a file without products leaves the previous
 * products in place and puts the reason on the feed (state `failed`). Never throws for a feed's fault. Skipped
 * when the feed is not queued: another refresh of it is running (one job per request and one per automatic
 * download may meet), or it has ended.
 */
export async function runFeedRefresh(
  ctx: Ctx,
  feedId: number,
  streamer: OutboundStreamer = createFeedStreamer(ctx),
): Promise<'ok' | 'failed' | 'skipped'> {
  const now = ctx.clock.now()
  const feed = await repo.claimRefresh(
    ctx.db,
    feedId,
    now,
    staleRefreshBefore(ctx, now),
    nextAutoRefresh(ctx, now),
  )
  if (!feed) return 'skipped'
  let res: StreamResponse | undefined
  try {
    await repo.clearStaging(ctx.db, feedId)
    res = await openFollowingRedirects(ctx, streamer, feed.url)
    if (res.status < 200 || res.status >= 300)
      throw new RefreshFailure(`The feed URL answered HTTP ${res.status}`)
    let detected: FeedFormat | null = null
    const limit = ctx.config.feedItemLimit
    let seen = 0
    let pending = new Map<string, FeedProduct>()
    const flush = async () => {
      if (pending.size === 0) return
      const batch = [...pending.values()]
      pending = new Map()
      await repo.stageProducts(ctx.db, feedId, feed.account_id, batch)
    }
    for await (const batch of parseFeed(
      gunzipIfCompressed(res.body, ctx.config.feedMaxBytes),
      feed.format_detected ? null : feed.format,
      (f) => (detected = f),
      contentTypeCharset(res.headers['content-type']),
    )) {
      // Fails at the limit-th item: the rest of the file is neither read (the download is dropped) nor staged.
      for (const p of batch) {
        if (++seen >= limit) throw new RefreshFailure(itemLimitReason(limit), 'item_limit')
        pending.set(p.id, p)
      }
      if (pending.size >= STAGE_BATCH) await flush()
    }
    await flush()
    if (seen === 0) throw new RefreshFailure('The feed holds no products (none with an id)')
    const count = await retriedTransaction(ctx.db, (tx) =>
      repo.swapInStaged(tx, feedId, detected, ctx.clock.now()),
    )
    ctx.log.info({ feedId, items: seen, products: count }, 'feed refreshed')
    return 'ok'
  } catch (err) {
    let failure = reasonOf(err, ctx)
    if (failure === undefined) {
      ctx.log.error({ err, feedId }, 'feed refresh failed')
      failure = { reason: 'The refresh failed on the server; ask for another one later', code: 'server' }
    }
    res?.close() // before the database work below: the feed's server need not wait for it
    await repo.clearStaging(ctx.db, feedId).catch(() => undefined)
    await repo.markFailed(ctx.db, feedId, failure.reason, failure.code, ctx.clock.now())
    return 'failed'
  } finally {
    res?.close() // idempotent: stops the timer and drops a connection not read to its end
  }
}
