import type { DkimKey, MailAddress, OutgoingMail } from '../../core/mail/mailer.js'
import {
  compileTemplate,
  renderHeader,
  type CompiledTemplate,
  type MergeData,
  type MergeValue,
} from '../../core/mail/merge-tags.js'
import type { MessageContent, MessageRow } from '../messages/index.js'
import type { BatchRow } from './transactional.repo.js'

/** What every recipient of a batch shares, prepared once per job: compiled templates, decoded attachments. */
export interface CompiledBatch {
  batch: BatchRow
  subject: CompiledTemplate
  html: CompiledTemplate | undefined
  text: CompiledTemplate | undefined
  attachments: NonNullable<OutgoingMail['attachments']>
  bounceDomain: string
  dkim: DkimKey | undefined
  webVersion: (messageId: number) => string
}

export function compileBatch(
  batch: BatchRow,
  sender: { bounceDomain: string; dkim: DkimKey | undefined; webVersion: (id: number) => string },
): CompiledBatch {
  return {
    batch,
    subject: compileTemplate(batch.subject),
    html: batch.html === null ? undefined : compileTemplate(batch.html),
    text: batch.text === null ? undefined : compileTemplate(batch.text),
    attachments: batch.attachments.map((a) => ({
      filename: a.name,
      contentType: a.type,
      content: Buffer.from(a.content, 'base64'),
    })),
    ...sender,
  }
}

/**
 * The recipient's variables: global ones, overridden by the recipient's own (names lower-cased at intake), then
 * the reserved ones, which only the recipient can supply. No prototype: `*|constructor|*` must render empty.
 */
function recipientVars(
  batch: BatchRow,
  m: MessageRow,
  coupons: Record<string, string> | undefined,
): Record<string, MergeValue> {
  const vars = Object.assign(Object.create(null) as Record<string, MergeValue>, batch.globalVars, m.vars)
  vars.email = m.email
  vars['address.email'] = m.email
  vars['address.name'] = m.recipientName
  vars.email_id = String(m.id)
  // The codes handed to this message (`coupon:12`), which no merge_vars entry can replace.
  if (coupons) Object.assign(vars, coupons)
  return vars
}

const address = (email: string, name?: string): MailAddress =>
  name ? { address: email, name } : { address: email }

/** One recipient's message, personalised, ready for composeMessage (tracking, VERP, DKIM). */
export function renderFor(c: CompiledBatch, m: MessageRow, coupons?: Record<string, string>): MessageContent {
  const data: MergeData = {
    vars: recipientVars(c.batch, m, coupons),
    special: (name) => (name === 'WEBVERSION' ? c.webVersion(m.id) : undefined),
  }
  const copies = c.batch.copies[m.email]
  return {
    messageId: m.id,
    from: address(c.batch.fromEmail, c.batch.fromName),
    replyTo: c.batch.replyTo ?? undefined,
    to: address(m.email, m.recipientName),
    cc: (copies?.cc ?? []).map((a) => address(a)),
    bcc: (copies?.bcc ?? []).map((a) => address(a)),
    subject: renderHeader(c.subject, data),
    html: c.html?.render(data, 'html'),
    text: c.text?.render(data, 'text'),
    trackOpens: m.trackOpens,
    trackClicks: m.trackClicks,
    marketing: false,
    bounceDomain: c.bounceDomain,
    dkim: c.dkim,
    attachments: c.attachments,
  }
}
