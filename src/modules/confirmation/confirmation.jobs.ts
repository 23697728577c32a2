import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import type { PendingConfirmation } from './confirmation.repo.js'
import { createConfirmationService } from './confirmation.service.js'

export const CONFIRMATION_MAIL_JOB = 'subscribers.confirmation-mail'

declare module '../../core/jobs/queue.js' {
  interface JobMap {
    'subscribers.confirmation-mail': PendingConfirmation
  }
}

/**
 * Enqueues the confirmation mail inside the caller's transaction: the job exists exactly when the
 * unconfirmed subscription commits, and vanishes with it on a rollback.
 */
export async function queueConfirmationMail(
  ctx: Pick<AppContext, 'jobs'>,
  tx: Executor,
  p: PendingConfirmation,
): Promise<void> {
  const { accountId, listId, contactId } = p
  await ctx.jobs.send(CONFIRMATION_MAIL_JOB, { accountId, listId, contactId }, { tx })
}

export async function startConfirmationWorker(ctx: AppContext): Promise<void> {
  const service = createConfirmationService(ctx)
  await ctx.jobs.work(CONFIRMATION_MAIL_JOB, async (data, meta) => {
    try {
      const result = await service.sendMail(data)
      ctx.log.debug({ job: meta.id, listId: data.listId, result }, 'confirmation mail')
    } catch (err) {
      // A 5xx from the relay (the address is refused) will not change on a retry; anything else may.
      if (!isPermanentRefusal(err)) throw err
      ctx.log.warn({ job: meta.id, listId: data.listId, err }, 'confirmation mail refused by the relay')
    }
  })
}

function isPermanentRefusal(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { responseCode?: unknown }).responseCode : 0
  return typeof code === 'number' && code >= 500 && code < 600
}
