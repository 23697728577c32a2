import type { AppContext } from '../../core/context.js'
import type { OutgoingMail } from '../../core/mail/mailer.js'
import { classifySmtpReply } from '../../core/mail/bounce-rules.js'
import { markAccepted, markRefused, type MessageRow, type TrackedMessage } from '../messages/index.js'
import { createEventRecorder } from './event-recorder.js'

export type DeliveryOutcome = 'accepted' | 'hard_bounce' | 'retry'

interface SmtpFailure {
  responseCode?: number
  response?: string
  message?: string
}

/**
 * Hands one message to the relay and records what the relay said. A refusal at RCPT/DATA with 5xx is a hard
 * bounce on the spot; 4xx (and a broken connection) asks the caller to retry later, and the caller turns the
 * last failed try into a soft bounce with `recordSoftFailure`.
 */
export async function deliver(
  ctx: Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'mailer'>,
  message: MessageRow,
  mail: OutgoingMail,
): Promise<{ outcome: DeliveryOutcome; error?: string }> {
  const events = createEventRecorder(ctx)
  try {
    const result = await ctx.mailer.send(mail)
    // The message is about its own recipient: an accepted cc does not make a refused `to` delivered.
    const own = message.email.toLowerCase()
    if (result.rejected.some((a) => a.toLowerCase() === own)) {
      const error = `recipient refused: ${result.rejected.join(', ')}`
      await ctx.db.transaction(async (tx) => {
        await markRefused(tx, message.id, error, ctx.clock.now())
        await events.bounced(tx, message, 'hard', error)
      })
      return { outcome: 'hard_bounce', error }
    }
    await ctx.db.transaction(async (tx) => {
      await markAccepted(tx, message.id, result.messageId, ctx.clock.now())
      await events.sent(tx, message)
    })
    return { outcome: 'accepted' }
  } catch (err) {
    const failure = smtpFailure(err)
    if (failure.outcome === 'hard_bounce') {
      await ctx.db.transaction(async (tx) => {
        await markRefused(tx, message.id, failure.error, ctx.clock.now())
        await events.bounced(tx, message, 'hard', failure.error)
      })
    }
    return failure
  }
}

/**
 * What a failed hand-over means: a refusal with 5xx that reads as permanent is a hard bounce on the spot;
 * 4xx, and a broken or refused connection, ask for a retry later.
 */
export function smtpFailure(err: unknown): { outcome: 'hard_bounce' | 'retry'; error: string } {
  const f = err as SmtpFailure
  const error = (f.response ?? f.message ?? String(err)).replace(/\s+/g, ' ').slice(0, 500)
  const code = typeof f.responseCode === 'number' ? f.responseCode : 0
  const hard = code >= 500 && classifySmtpReply(code, undefined, error) === 'hard_bounce'
  return { outcome: hard ? 'hard_bounce' : 'retry', error }
}

/** The relay kept answering 4xx (or could not be reached) until the retries ran out: a soft bounce. */
export async function recordSoftFailure(
  ctx: Pick<AppContext, 'db' | 'dbHandle' | 'clock'>,
  message: Omit<TrackedMessage, 'links'>,
  error: string,
) {
  const events = createEventRecorder(ctx)
  await ctx.db.transaction(async (tx) => {
    await markRefused(tx, message.id, error, ctx.clock.now())
    await events.bounced(tx, message, 'soft', error)
  })
}
