import type { AppContext } from '../../core/context.js'
import { parseVerpAddress } from '../../core/mail/verp.js'
import { createEventRecorder } from '../events/index.js'
import { findMessage, findTrackedMessage, type TrackedMessage } from '../messages/index.js'
import { readMessageToken } from '../tracking/tracking.links.js'
import { copiesOfRecipient } from '../transactional/index.js'
import { classifyInbound, type InboundReport } from './classify.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'config' | 'linkSecret'>

/** What an address at the bounce host stands for; null when it is not one we minted. */
export type InboundTarget = { kind: 'verp'; messageId: number } | { kind: 'unsubscribe'; messageId: number }

const UNSUB = /^unsubscribe\+([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)@/i

export function readInboundAddress(
  ctx: Pick<AppContext, 'config' | 'linkSecret'>,
  address: string,
): InboundTarget | null {
  const ref = parseVerpAddress(ctx.linkSecret, address)
  const id = ref && /^m[1-9]\d{0,17}$/.test(ref) ? Number(ref.slice(1)) : null
  if (id) return { kind: 'verp', messageId: id }
  const unsub = UNSUB.exec(address.trim())
  const unsubId = unsub?.[1] ? readMessageToken(ctx, 'unsub', unsub[1]) : null
  return unsubId ? { kind: 'unsubscribe', messageId: unsubId } : null
}

export type InboundOutcome = InboundReport['kind'] | 'unsubscribe' | 'no_message' | 'copy'

/**
 * True when the report is about a cc or bcc copy of the message rather than its own recipient. A transactional
 * message goes to its `to` address and that address's copies in one SMTP transaction under one VERP address,
 * so a copy's bounce or complaint comes back to the same address; counting it against the `to` recipient
 * would suppress a person whose mail arrived. A report naming any other address (forwarding rewrites
 * Final-Recipient) still counts for the message's recipient.
 */
async function aboutACopy(ctx: Ctx, message: TrackedMessage, recipient: string | undefined) {
  const named = recipient?.trim().toLowerCase()
  if (!named || named === message.email.toLowerCase()) return false
  const batchId = (await findMessage(ctx.db, message.id))?.batchId
  if (!batchId) return false
  return (await copiesOfRecipient(ctx.db, batchId, message.email)).includes(named)
}

/**
 * Applies one inbound message addressed to one of our addresses: a bounce or complaint about the message the
 * VERP token names (the token, not the report's own claims, decides which message and account), or a mailto
 * unsubscribe. Auto-replies and anything unrecognised change nothing.
 */
export async function handleInbound(ctx: Ctx, target: InboundTarget, raw: Buffer): Promise<InboundOutcome> {
  const events = createEventRecorder(ctx)
  if (target.kind === 'unsubscribe') {
    const done = await events.unsubscribed(target.messageId, async () => null)
    return done ? 'unsubscribe' : 'no_message'
  }
  const message = await findTrackedMessage(ctx.dbHandle, target.messageId)
  if (!message) return 'no_message'
  const report = await classifyInbound(raw)
  if (
    (report.kind === 'hard_bounce' || report.kind === 'soft_bounce' || report.kind === 'complaint') &&
    (await aboutACopy(ctx, message, report.recipient))
  )
    return 'copy'
  const detail = [report.status, report.diagnostic].filter(Boolean).join(' ') || null
  switch (report.kind) {
    case 'hard_bounce':
    case 'soft_bounce':
      await ctx.db.transaction((tx) =>
        events.bounced(tx, message, report.kind === 'hard_bounce' ? 'hard' : 'soft', detail),
      )
      break
    case 'complaint':
      await ctx.db.transaction((tx) => events.complained(tx, message, report.feedbackType ?? null))
      break
    default:
      break
  }
  return report.kind
}
