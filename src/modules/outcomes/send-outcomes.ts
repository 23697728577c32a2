import type { AppContext } from '../../core/context.js'
import type { SendOutcomes } from '../delivery/index.js'
import { markRefused } from '../messages/index.js'
import { enqueueWebhookEvents } from '../webhooks/index.js'
import { recordSoftFailure, smtpFailure } from './deliver.js'
import { createEventRecorder } from './event-recorder.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock'>

/**
 * What the one sender records about the relay's answers, wired here above the modules it writes to (events,
 * messages, webhooks), which the delivery module may not import (subscribers → confirmation → delivery).
 */
export const sendOutcomes: SendOutcomes = {
  async sent(tx, sent, now) {
    await enqueueWebhookEvents(
      tx,
      sent.map((e) => ({
        accountId: e.account_id,
        messageId: e.message_id,
        campaignId: e.campaign_id,
        pipelineId: e.pipeline_id,
        actionId: e.action_id,
        contactId: e.contact_id,
        email: e.email,
        event: 'send' as const,
        occurredAt: now,
      })),
    )
  },
  async refused(ctx: Ctx, message, error) {
    const recorder = createEventRecorder(ctx)
    await ctx.db.transaction(async (tx) => {
      await markRefused(tx, message.id, error, ctx.clock.now())
      await recorder.bounced(tx, message, 'hard', error)
    })
  },
  softBounce: (ctx: Ctx, message, error) => recordSoftFailure(ctx, message, error),
  classify: smtpFailure,
  unsendable: (ctx: Ctx, id, error) => markRefused(ctx.db, id, error, ctx.clock.now()),
}
