import type { AppContext } from '../../core/context.js'
import { classifySmtpReply } from '../../core/mail/bounce-rules.js'
import type { MessageRef, SendOutcomes } from '../delivery/index.js'
import { markRefused } from '../messages/index.js'
import { accountsWithWebhook, enqueueWebhookEvents } from '../webhooks/index.js'
import { createEventRecorder } from './event-recorder.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock'>

interface SmtpFailure {
  responseCode?: number
  response?: string
  message?: string
  /** The command the relay answered (smtp-session.ts): RCPT TO and DATA are about this message. */
  command?: string
}

/**
 * What a failed hand-over means. The relay's answer to this message's recipient or data: 5xx that reads as
 * permanent is a hard bounce on the spot, else a retry later (a soft bounce if it fails again). Anything else is
 * the relay's own failure, which says nothing of the recipient: unreachable, our login refused (535), our sender
 * refused, the session broken. Read as bounces, a wrong SMTP password suppressed every recipient tried, and an
 * outage longer than the retry soft-bounced the rest of a campaign; such rows wait for the relay instead.
 */
function smtpFailure(err: unknown): { outcome: 'hard_bounce' | 'retry' | 'relay'; error: string } {
  const f = err as SmtpFailure
  const error = (f.response ?? f.message ?? String(err)).replace(/\s+/g, ' ').slice(0, 500)
  const code = typeof f.responseCode === 'number' ? f.responseCode : 0
  if (code === 0 || (f.command !== 'RCPT TO' && f.command !== 'DATA')) return { outcome: 'relay', error }
  const hard = code >= 500 && classifySmtpReply(code, undefined, error) === 'hard_bounce'
  return { outcome: hard ? 'hard_bounce' : 'retry', error }
}

/** The relay refused the message, for good (`hard`) or once more after a deferral (`soft`): row and bounce. */
async function recordRefusal(ctx: Ctx, message: MessageRef, kind: 'hard' | 'soft', error: string) {
  const recorder = createEventRecorder(ctx)
  await retriedTransaction(ctx.db, async (tx) => {
    await markRefused(tx, message.id, error, ctx.clock.now(), message.subject)
    await recorder.bounced(tx, message, kind, error)
  })
}

/**
 * What the one sender records about the relay's answers, wired here above the modules it writes to (events,
 * messages, webhooks), which the delivery module may not import (subscribers → confirmation → delivery).
 */
export const sendOutcomes: SendOutcomes = {
  sentWanted: accountsWithWebhook,
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
  refused: (ctx: Ctx, message, error) => recordRefusal(ctx, message, 'hard', error),
  // The relay kept answering 4xx for the message until the retry: a soft bounce.
  softBounce: (ctx: Ctx, message, error) => recordRefusal(ctx, message, 'soft', error),
  classify: smtpFailure,
  unsendable: (ctx: Ctx, id, error) => markRefused(ctx.db, id, error, ctx.clock.now()),
}
