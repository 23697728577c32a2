import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { retriedTransaction } from '../../core/db/retry.js'
import { startPollLoop } from '../../core/poll-loop.js'
import { createFeedStreamer, runFeedRefresh } from './feed-refresh.js'
import { nextAutoRefresh, staleRefreshBefore } from './feed-schedule.js'
import * as repo from './feeds.repo.js'
import { logRoundFailure } from '../../core/round-failure.js'

export const FEED_REFRESH_JOB = 'feeds.refresh'

declare module '../../core/jobs/queue.js' {
  interface JobMap {
    'feeds.refresh': { feedId: number }
  }
}

/** How often a worker looks for feeds whose automatic download is due. */
export const AUTO_REFRESH_POLL_MS = 60_000
/** Feeds queued per look: a worker's round stays short however many fall due at once (after an upgrade). */
const AUTO_REFRESH_PER_ROUND = 100

/** Queued in the transaction that records the request, so the job exists exactly when the request does. */
export async function queueRefresh(
  ctx: Pick<AppContext, 'jobs'>,
  tx: Executor,
  feedId: number,
): Promise<void> {
  // No retries: a failed refresh is an answer (on the feed), and a new one is asked for or falls due.
  await ctx.jobs.send(FEED_REFRESH_JOB, { feedId }, { tx, retryLimit: 0 })
}

/**
 * One look for feeds whose automatic download is due: they are queued, with their jobs, in one transaction,
 * and due again FEED_AUTO_REFRESH_HOURS later. Returns how many were queued (up to a round's worth).
 */
export async function queueDueFeedRefreshes(
  ctx: Pick<AppContext, 'db' | 'clock' | 'config' | 'jobs'>,
): Promise<number> {
  const now = ctx.clock.now()
  const next = nextAutoRefresh(ctx, now)
  if (!next) return 0
  return retriedTransaction(ctx.db, async (tx) => {
    const ids = await repo.queueDueRefreshes(
      tx,
      now,
      next,
      staleRefreshBefore(ctx, now),
      AUTO_REFRESH_PER_ROUND,
    )
    for (const id of ids) await queueRefresh(ctx, tx, id)
    return ids.length
  })
}

export async function startFeedsWorker(ctx: AppContext): Promise<void> {
  const streamer = createFeedStreamer(ctx)
  await ctx.jobs.work(
    FEED_REFRESH_JOB,
    async (data, meta) => {
      const result = await runFeedRefresh(ctx, data.feedId, streamer)
      ctx.log.debug({ job: meta.id, feedId: data.feedId, result }, 'feed refresh job')
    },
    // Two workers of one job each: a shop's server that is slow to answer (up to FEED_TIMEOUT_SECONDS) holds up
    // one of them; two jobs of one fetch would hold each other, and the next fetch, until the slower ended.
    { workers: 2 },
  )
  if (ctx.config.feedAutoRefreshHours > 0) {
    // A look every AUTO_REFRESH_POLL_MS, at once again after a full round.
    const auto = startPollLoop(
      async () => (await queueDueFeedRefreshes(ctx)) >= AUTO_REFRESH_PER_ROUND,
      AUTO_REFRESH_POLL_MS,
      (err) => logRoundFailure(ctx.log, err, 'queueing the automatic feed downloads failed'),
    )
    ctx.onClose(() => auto.stop())
  }
}
