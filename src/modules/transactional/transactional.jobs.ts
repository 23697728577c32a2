import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { sendBatch } from './transactional.sender.js'

export const TRANSACTIONAL_SEND_JOB = 'transactional.send'
/** Tries after the first; the last one turns what the relay still defers into soft bounces. */
export const TRANSACTIONAL_RETRY_LIMIT = 5

declare module '../../core/jobs/queue.js' {
  interface JobMap {
    'transactional.send': { batchId: number }
  }
}

/** One job per API call, enqueued in the intake transaction: it exists exactly when the batch commits. */
export async function queueBatch(
  ctx: Pick<AppContext, 'jobs'>,
  tx: Executor,
  batchId: number,
): Promise<void> {
  await ctx.jobs.send(TRANSACTIONAL_SEND_JOB, { batchId }, { tx, retryLimit: TRANSACTIONAL_RETRY_LIMIT })
}

export async function startTransactionalWorker(ctx: AppContext): Promise<void> {
  await ctx.jobs.work(
    TRANSACTIONAL_SEND_JOB,
    async (data, meta) => {
      const result = await sendBatch(ctx, data.batchId, meta.retryCount >= TRANSACTIONAL_RETRY_LIMIT)
      ctx.log.debug({ job: meta.id, batchId: data.batchId, ...result }, 'transactional batch')
    },
    { batchSize: 50, concurrency: 8 },
  )
}
