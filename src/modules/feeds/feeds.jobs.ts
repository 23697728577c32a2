import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { createFeedStreamer, runFeedRefresh } from './feed-refresh.js'

export const FEED_REFRESH_JOB = 'feeds.refresh'

declare module '../../core/jobs/queue.js' {
  interface JobMap {
    'feeds.refresh': { feedId: number }
  }
}

/** Queued in the transaction that records the request, so the job exists exactly when the request does. */
export async function queueRefresh(
  ctx: Pick<AppContext, 'jobs'>,
  tx: Executor,
  feedId: number,
): Promise<void> {
  // No retries: a failed refresh is an answer (on the feed), and a new one is the customer's to ask for.
  await ctx.jobs.send(FEED_REFRESH_JOB, { feedId }, { tx, retryLimit: 0 })
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
}
