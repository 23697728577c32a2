import type { Attachment, ParsedMail } from 'mailparser'
import { hasAutoReplyHeaders, hasAutoReplySubject } from './auto-reply.js'
import { classifyRecipient, pickRecipient, readDeliveryStatus } from './delivery-status.js'
import { classifyFeedback, readFeedbackReport } from './feedback-report.js'
import { compactReport, type InboundReport } from './inbound-report.js'
import { readPlainTextBounce } from './plain-text-bounce.js'
import {
  addressOf,
  envelopeFromReceived,
  first,
  headerSection,
  messageIdOf,
  parseFields,
  type Fields,
} from './report-fields.js'

export type { InboundReport } from './inbound-report.js'
export { classifySmtpReply, type BounceClass } from '../../core/mail/bounce-rules.js'

const DELIVERY_STATUS = new Set(['message/delivery-status', 'message/global-delivery-status'])
const FEEDBACK_REPORT = 'message/feedback-report'
/**
 * The returned original: whole (message/rfc822, RFC 6532 message/global) or headers only
 * (text/rfc822-headers, RFC 6522). "message/rfc822-headers" is not a registered type but is seen in the
 * wild and costs nothing to accept.
 */
const ORIGINAL = new Set([
  'message/rfc822',
  'message/global',
  'text/rfc822-headers',
  'message/rfc822-headers',
  'message/global-headers',
])

/**
 * Reads what one inbound message to the bounce address says. Order matters:
 * 1. an ARF feedback report (RFC 5965) → complaint (or unknown for non-complaint feedback types);
 * 2. a DSN (RFC 3464) → by Action and Status (delivery-status.ts, bounce-rules.ts);
 * 3. an auto-reply subject ("Automatic reply: ...") → auto_reply, before any bounce wording is read;
 * 4. a plain-text bounce from a mailer daemon with an SMTP code in its text (plain-text-bounce.ts);
 * 5. auto-reply headers (Auto-Submitted, X-Autoreply, ...) → auto_reply; bounces carry them as well,
 *    which is why this comes after 2 and 4;
 * 6. anything else (a person's reply, a newsletter sent to the bounce address) → unknown.
 * Never throws for odd input: unparsable mail is reported as unknown.
 */
export async function classifyInbound(raw: Buffer | string): Promise<InboundReport> {
  let parsed: ParsedMail
  try {
    // Loaded with the first inbound mail, not at start: most processes never see one, and mailparser (with
    // its charset tables) cost every start 0.1-0.2 s.
    const { simpleParser } = await import('mailparser')
    parsed = await simpleParser(raw, {
      // Report parts as attachments with their raw bytes. By default mailparser folds delivery-status into
      // the text, and parses an inline message/rfc822 (as Microsoft JMRP sends it) into the text too,
      // losing the original headers we need.
      keepDeliveryStatus: true,
      ignoreEmbedded: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      skipImageLinks: true,
      checksumAlgo: false,
    })
  } catch {
    return { kind: 'unknown' }
  }
  return compactReport(readParsed(parsed))
}

function readParsed(parsed: ParsedMail): InboundReport {
  const headers = topHeaders(parsed)
  // What a reply or a bounce points back at when nothing better is included: our Message-ID.
  const inReplyTo = messageIdOf(parsed.inReplyTo)
  const original = originalHeaders(parsed.attachments)
  const fromOriginal = {
    originalMessageId: messageIdOf(first(original, 'message-id')),
    originalEnvelopeFrom:
      addressOf(first(original, 'return-path')) ?? envelopeFromReceived(original?.get('received') ?? []),
  }

  const feedback = partText(parsed.attachments, (t) => t === FEEDBACK_REPORT)
  if (feedback !== undefined) {
    const report = readFeedbackReport(feedback)
    return {
      kind: classifyFeedback(report),
      // Microsoft JMRP leaves Original-Rcpt-To out and names the recipient in its own header.
      recipient:
        report.recipient ??
        addressOf(first(original, 'x-hmxmroriginalrecipient')) ??
        addressOf(first(original, 'to')),
      originalMessageId: fromOriginal.originalMessageId,
      originalEnvelopeFrom: report.envelopeFrom ?? fromOriginal.originalEnvelopeFrom,
      feedbackType: report.feedbackType,
    }
  }

  const status = partText(parsed.attachments, (t) => DELIVERY_STATUS.has(t))
  if (status !== undefined) {
    const dsn = readDeliveryStatus(status)
    const rcpt = pickRecipient(dsn.recipients)
    return {
      kind: rcpt ? classifyRecipient(rcpt) : 'unknown',
      recipient:
        rcpt?.recipient ??
        addressOf(first(headers, 'x-failed-recipients')) ??
        addressOf(first(original, 'to')),
      status: rcpt?.status,
      diagnostic: rcpt?.diagnostic,
      originalMessageId: fromOriginal.originalMessageId ?? dsn.originalMessageId ?? inReplyTo,
      originalEnvelopeFrom: fromOriginal.originalEnvelopeFrom ?? dsn.envelopeFrom,
    }
  }

  if (hasAutoReplySubject(parsed.subject)) return { kind: 'auto_reply', originalMessageId: inReplyTo }

  const from = parsed.from?.value[0]
  const plain = readPlainTextBounce({
    fromAddress: from?.address,
    fromName: from?.name,
    subject: parsed.subject,
    text: parsed.text,
    headers,
  })
  if (plain) {
    return {
      ...plain,
      recipient: plain.recipient ?? addressOf(first(original, 'to')),
      originalMessageId: plain.originalMessageId ?? fromOriginal.originalMessageId ?? inReplyTo,
      originalEnvelopeFrom: plain.originalEnvelopeFrom ?? fromOriginal.originalEnvelopeFrom,
    }
  }

  if (hasAutoReplyHeaders(headers)) return { kind: 'auto_reply', originalMessageId: inReplyTo }
  return { kind: 'unknown', originalMessageId: inReplyTo }
}

/** The top-level header lines as fields, for the non-standard headers mailparser does not model. */
function topHeaders(parsed: ParsedMail): Fields {
  return parseFields(parsed.headerLines.map((h) => h.line).join('\n'))
}

function partText(attachments: readonly Attachment[], wanted: (type: string) => boolean): string | undefined {
  const part = attachments.find((a) => wanted(a.contentType.toLowerCase()))
  return part ? decodeText(part) : undefined
}

/**
 * A part's text in its declared charset: report parts should be ASCII (RFC 3464 2.1.1), but some servers put a
 * diagnostic in their own language and charset ("U\u017eivatel neexistuje" in ISO-8859-2). UTF-8 when none is
 * declared or the label is unknown.
 */
function decodeText(part: Attachment): string {
  const type = part.headers.get('content-type') as { params?: Record<string, string> } | undefined
  const charset = type?.params?.charset
  if (charset && !/^(?:utf-?8|us-ascii)$/i.test(charset)) {
    try {
      return new TextDecoder(charset).decode(part.content)
    } catch {
      // An unknown label: read as UTF-8 below.
    }
  }
  return part.content.toString('utf8')
}

function originalHeaders(attachments: readonly Attachment[]): Fields | undefined {
  const text = partText(attachments, (t) => ORIGINAL.has(t))
  return text === undefined ? undefined : parseFields(headerSection(text.replace(/^\s+/, '')))
}
