import { classifyFailure, refineStatus } from '../../core/mail/bounce-rules.js'
import { cleanDiagnostic, type InboundReport } from './inbound-report.js'
import { first, parseFieldBlocks, typedAddressOf, messageIdOf, type Fields } from './report-fields.js'

/** The parts of a message/delivery-status body (RFC 3464) the classifier uses. */
export interface DeliveryStatus {
  /** Postfix names the envelope sender of the bounced message: "X-Postfix-Sender: rfc822; a@b". */
  envelopeFrom?: string
  /** Gmail names the bounced message: "X-Original-Message-ID: <id>". */
  originalMessageId?: string
  recipients: DsnRecipient[]
}

export interface DsnRecipient {
  recipient?: string
  action?: string
  status?: string
  diagnostic?: string
}

export function readDeliveryStatus(text: string): DeliveryStatus {
  const perMessage: Fields = new Map()
  const recipients: DsnRecipient[] = []
  for (const block of parseFieldBlocks(text)) {
    // The first block is per-message by the RFC, but some MTAs drop it or split it; a block is a
    // recipient's when it has recipient fields, whatever its position.
    if (block.has('final-recipient') || block.has('original-recipient') || block.has('action')) {
      recipients.push(readRecipient(block))
    } else {
      for (const [name, values] of block) perMessage.set(name, [...(perMessage.get(name) ?? []), ...values])
    }
  }
  return {
    envelopeFrom: typedAddressOf(first(perMessage, 'x-postfix-sender')),
    originalMessageId: messageIdOf(first(perMessage, 'x-original-message-id')),
    recipients,
  }
}

function readRecipient(block: Fields): DsnRecipient {
  const diagnostic = cleanDiagnostic(withoutType(first(block, 'diagnostic-code')))
  return {
    // Original-Recipient is the address as we gave it in RCPT TO; Final-Recipient may be the target of
    // an alias or forward on the receiving side, which is not the subscriber we know.
    recipient:
      typedAddressOf(first(block, 'original-recipient')) ?? typedAddressOf(first(block, 'final-recipient')),
    // Only the keyword counts: a few MTAs append a comment ("failed (permanent error)").
    action: first(block, 'action')
      ?.toLowerCase()
      .match(/^[a-z]+/)?.[0],
    status: refineStatus(first(block, 'status')?.match(/^\d\.\d{1,3}\.\d{1,3}/)?.[0], diagnostic),
    diagnostic,
  }
}

/** "smtp; 550 5.1.1 ..." → "550 5.1.1 ..." (diagnostic-type; text, RFC 3464 2.3.6). */
function withoutType(value: string | undefined): string | undefined {
  return value?.replace(/^[A-Za-z0-9-]+\s*;\s*/, '')
}

/**
 * The recipient a report is about: we send one recipient per message (each has its own VERP sender), so
 * there is normally one. With several, the first failure counts, then the first delay.
 */
export function pickRecipient(recipients: readonly DsnRecipient[]): DsnRecipient | undefined {
  return (
    recipients.find((r) => r.action === 'failed') ??
    recipients.find((r) => r.action === 'delayed') ??
    recipients[0]
  )
}

/**
 * Action failed: by the status code (bounce-rules.ts). Action delayed: a warning, no bounce: the relay is
 * still trying, and either delivers (the mail counts as delivered) or later sends a failure report.
 * delivered / relayed / expanded are success notices (we never ask for them) and no bounce: unknown.
 * No Action at all (malformed): the status class decides, and without a status it is soft, as a
 * failure we cannot read proves nothing about the address.
 */
export function classifyRecipient(r: DsnRecipient): InboundReport['kind'] {
  switch (r.action) {
    case 'delayed':
      return 'delayed'
    case 'delivered':
    case 'relayed':
    case 'expanded':
      return 'unknown'
    default:
      return r.status ? classifyFailure(r.status, r.diagnostic) : 'soft_bounce'
  }
}
