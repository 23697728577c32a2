import type { AppContext } from '../../core/context.js'

type Ctx = Pick<AppContext, 'config'>

/**
 * Beyond FEED_TIMEOUT_SECONDS (the whole download and parse), the time a refresh may take to swap its products
 * in: a refresh that started longer ago than both died with its worker, and another may take the feed over.
 */
const SWAP_MARGIN_MS = 10 * 60_000

/** Refreshes that started before this have died (feeds.repo.ts, claimRefresh). */
export function staleRefreshBefore(ctx: Ctx, now: Date): Date {
  return new Date(now.getTime() - ctx.config.feedTimeoutSeconds * 1000 - SWAP_MARGIN_MS)
}

/** When a feed whose download starts `from` is downloaded again of the worker's accord; null when that is off. */
export function nextAutoRefresh(ctx: Ctx, from: Date): Date | null {
  const hours = ctx.config.feedAutoRefreshHours
  return hours > 0 ? new Date(from.getTime() + hours * 3_600_000) : null
}
