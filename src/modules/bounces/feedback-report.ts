import type { InboundReport } from './inbound-report.js'
import { first, parseFields, typedAddressOf } from './report-fields.js'

/** The parts of a message/feedback-report body (RFC 5965 3.1) the classifier uses. */
export interface FeedbackReport {
  feedbackType?: string
  /** Original-Mail-From: the envelope sender of the reported message (our VERP address). */
  envelopeFrom?: string
  /** Original-Rcpt-To; absent when the provider redacts it (Microsoft JMRP does). */
  recipient?: string
}

export function readFeedbackReport(text: string): FeedbackReport {
  const fields = parseFields(text)
  return {
    feedbackType: first(fields, 'feedback-type')?.toLowerCase(),
    envelopeFrom: typedAddressOf(first(fields, 'original-mail-from')),
    recipient: typedAddressOf(first(fields, 'original-rcpt-to')),
  }
}

/**
 * Feedback types that are a recipient's complaint (RFC 5965 / 6650): "abuse" is the spam button, "fraud"
 * a phishing report, "other" what some providers send for either. Not complaints, so never suppressing:
 * "not-spam" (the opposite), "auth-failure" (RFC 6591 DMARC/SPF/DKIM failure reports, machine-made) and
 * "virus" (a scanner's finding). A report without a type or with an unknown one is left unknown too.
 */
const COMPLAINT_TYPES = new Set(['abuse', 'fraud', 'other'])

export function classifyFeedback(report: FeedbackReport): InboundReport['kind'] {
  return report.feedbackType && COMPLAINT_TYPES.has(report.feedbackType) ? 'complaint' : 'unknown'
}
