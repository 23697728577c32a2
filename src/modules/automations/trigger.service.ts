import type { AppContext } from '../../core/context.js'
import { isValidEmail, normalizeEmail } from '../../core/http/email.js'
import { fieldError, notFound, subscriberNotInList } from '../../core/http/errors.js'
import { findPipeline } from '../pipelines/index.js'
import { startRun } from './run-start.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'clock'>

export function createTriggerService(ctx: Ctx) {
  return {
    /**
     * `POST /pipelines/{id}/trigger`: starts a run for a subscribed member of the pipeline's list, in one
     * transaction (the run is the trigger's record). Under `once` re-entry a second trigger starts nothing
     * and answers the earlier run's id, so retrying the call is harmless. A paused pipeline's run waits.
     */
    async trigger(accountId: number, pipelineId: number, email: string) {
      const address = normalizeEmail(email)
      // A malformed address is a bad request (422, as every other email field), not an unknown subscriber.
      if (!isValidEmail(address)) throw fieldError('email', 'The email must be a valid email address.')
      const pipeline = await findPipeline(ctx.db, accountId, pipelineId)
      if (!pipeline) throw notFound('Automation not found')
      const outcome = await retriedTransaction(ctx.db, (tx) =>
        startRun(tx, pipeline, address, 'api', ctx.clock.now()),
      )
      // A call of the API starts no chain of runs (run-chain.ts), so the only run not started is a non-member's,
      // or a member's who is not subscribed (unsubscribed, unconfirmed, bounced): say which, as a member
      // shows in GET /lists/{id}/subscriber/{email} whatever their status.
      if (!('runId' in outcome)) {
        const status = outcome.kind === 'not_in_list' ? outcome.status : undefined
        throw subscriberNotInList(
          status === undefined
            ? undefined
            : `Subscriber is in this list but not subscribed (status ${status}): automations start only for subscribed members`,
        )
      }
      return { success: true as const, trigger_id: String(outcome.runId) }
    },
  }
}
