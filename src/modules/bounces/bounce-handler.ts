import type { AppContext } from '../../core/context.js'
import { parseVerpAddress } from '../../core/mail/verp.js'
import { createEventRecorder } from '../outcomes/index.js'
import { findMessage, findTrackedMessage, type TrackedMessage } from '../messages/index.js'
import { readMessageToken } from '../../core/mail/tracking-links.js'
import { copiesOfRecipient } from '../transactional/index.js'
import { erasedStandIn } from '../subscribers/index.js'
import { classifyInbound, type InboundReport } from './classify.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'config' | 'linkSecret'>

/**
 * What an address at the bounce host stands for; null when it is none of ours. `report`: a mailbox whose
 * mail names its message only inside (the return path in the returned headers, or the ARF's
 * Original-Mail-From): postmaster (RFC 5321 4.5.1 requires it), abuse (RFC 2142, where feedback loops
 * report), and a VERP address whose signature fails, as when an MTA changed its case.
 */
export type InboundTarget =
  { kind: 'verp'; messageId: number } | { kind: 'unsubscribe'; messageId: number } | { kind: 'report' }

const UNSUB = /^unsubscribe\+([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)@/i
// RFC 5321 4.5.1: postmaster, with or without a domain.
const REPORT_MAILBOX = /^(?:postmaster$|(?:postmaster|abuse|bounces\+[^@]*)@)/i

export function readInboundAddress(
  ctx: Pick<AppContext, 'config' | 'linkSecret'>,
  address: string,
): InboundTarget | null {
  const id = verpMessageId(ctx, address)
  if (id) return { kind: 'verp', messageId: id }
  const plain = unquotedLocalPart(address.trim())
  const unsub = UNSUB.exec(plain)
  const unsubId = unsub?.[1] ? readMessageToken(ctx, 'unsub', unsub[1]) : null
  if (unsubId) return { kind: 'unsubscribe', messageId: unsubId }
  return REPORT_MAILBOX.test(plain) ? { kind: 'report' } : null
}

/**
 * RFC 5321 4.1.2: `"postmaster"@host` is `postmaster@host`; quotes around a plain local part mean nothing
 * (parseVerpAddress takes them off a VERP address itself).
 */
const unquotedLocalPart = (address: string) => address.replace(/^"([A-Za-z0-9.+_-]*)"(?=@|$)/, '$1')

/** The message a VERP address (ours, with a good signature) was minted for. */
function verpMessageId(ctx: Pick<AppContext, 'linkSecret'>, address: string): number | null {
  const ref = parseVerpAddress(ctx.linkSecret, address)
  return ref && /^m[1-9]\d{0,17}$/.test(ref) ? Number(ref.slice(1)) : null
}

export type InboundOutcome = InboundReport['kind'] | 'unsubscribe' | 'no_message' | 'copy'

/**
 * The lists a mailto unsubscribe about this message leaves (null: every list of the account), the same answer
 * the unsubscribe link's page gets: a campaign's lists, an automation's list, every list for transactional mail.
 */
export type UnsubscribeLists = (message: TrackedMessage) => Promise<number[] | null>

/**
 * The cc or bcc address the report is about, when it is about a copy of the message rather than its own
 * recipient; null otherwise. A transactional message goes to its `to` address and that address's copies in
 * one SMTP transaction under one VERP address, so a copy's bounce or complaint comes back to the same address;
 * counting it against the `to` recipient would suppress a person whose mail arrived. A report naming any other
 * address (forwarding rewrites Final-Recipient) still counts for the message's recipient.
 */
async function copyNamed(ctx: Ctx, message: TrackedMessage, recipient: string | undefined) {
  const named = recipient?.trim().toLowerCase()
  if (!named || named === message.email.toLowerCase()) return null
  const batchId = (await findMessage(ctx.db, message.id))?.batchId
  if (!batchId) return null
  const copies = await copiesOfRecipient(ctx.db, batchId, message.email)
  if (copies.includes(named)) return named
  // A copy erased since: its stand-in is in the copies now, and suppressing a stand-in makes no contact.
  const stand = erasedStandIn(ctx.linkSecret, message.accountId, named)
  return copies.includes(stand) ? stand : null
}

/**
 * Applies one inbound message, whatever recipients it was addressed to: a bounce or complaint about the
 * message the VERP token names (the token, not the report's own claims, decides which message and account),
 * or a mailto unsubscribe (which leaves `unsubscribeLists`). The message is parsed once, and each message it names is changed once, however
 * many of our addresses it went to. Auto-replies and anything unrecognised change nothing.
 */
export async function handleInbound(
  ctx: Ctx,
  targets: readonly InboundTarget[],
  raw: Buffer,
  unsubscribeLists: UnsubscribeLists,
): Promise<InboundOutcome[]> {
  const events = createEventRecorder(ctx)
  const outcomes: InboundOutcome[] = []
  const unsubscribes = new Set(targets.flatMap((t) => (t.kind === 'unsubscribe' ? [t.messageId] : [])))
  for (const id of unsubscribes)
    outcomes.push((await events.unsubscribed(id, unsubscribeLists)) ? 'unsubscribe' : 'no_message')
  if (!targets.some((t) => t.kind !== 'unsubscribe')) return outcomes
  const report = await classifyInbound(raw)
  // A report to a mailbox counts only when what it returns names one of our messages by a good signature.
  const returned = report.originalEnvelopeFrom ? verpMessageId(ctx, report.originalEnvelopeFrom) : null
  const named = new Set(
    targets.flatMap((t) =>
      t.kind === 'verp' ? [t.messageId] : t.kind === 'report' && returned ? [returned] : [],
    ),
  )
  if (named.size === 0) outcomes.push('no_message')
  for (const id of named) outcomes.push(await applyReport(ctx, events, id, report))
  return outcomes
}

/** The report kinds that change something, as the event recorder names them. */
const REPORTED = { hard_bounce: 'hard', soft_bounce: 'soft', complaint: 'complaint' } as const

async function applyReport(
  ctx: Ctx,
  events: ReturnType<typeof createEventRecorder>,
  messageId: number,
  report: InboundReport,
): Promise<InboundOutcome> {
  const message = await findTrackedMessage(ctx.dbHandle, messageId)
  if (!message) return 'no_message'
  const { kind, status, diagnostic } = report
  // The remote server's words, led by the status unless they carry it already ("550 5.1.1 ...").
  const detail =
    diagnostic && (!status || diagnostic.includes(status))
      ? diagnostic
      : [status, diagnostic].filter(Boolean).join(' ') || null
  const what = kind in REPORTED ? REPORTED[kind as keyof typeof REPORTED] : null
  if (!what) return kind
  const copy = await copyNamed(ctx, message, report.recipient)
  await retriedTransaction(ctx.db, (tx) =>
    copy
      ? events.copyReported(tx, message, copy, what, detail)
      : what === 'complaint'
        ? events.complained(tx, message, report.feedbackType ?? null)
        : events.bounced(tx, message, what, detail),
  )
  return copy ? 'copy' : kind
}
