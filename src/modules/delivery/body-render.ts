import type { DkimKey, MailAddress, OutgoingMail } from '../../core/mail/mailer.js'
import {
  compileTemplate,
  renderHeader,
  type CompiledTemplate,
  type MergeData,
  type MergeValue,
} from '../../core/mail/merge-tags.js'
import { composeMessage, type ComposedMessage } from '../../core/mail/compose-message.js'
import { trackingLinks } from '../../core/mail/tracking-links.js'

export interface BodyAttachment {
  name: string
  type: string
  /** base64, as received */
  content: string
}

/**
 * What every recipient of one body row shares (transactional, confirmation and automation mail); plain data,
 * so it can cross to a signing thread.
 */
export interface BodyContent {
  bodyId: number
  subject: string
  fromName: string
  fromEmail: string
  replyTo: string | null
  html: string | null
  text: string | null
  attachments: BodyAttachment[]
  /** Campaign-like mail (automations): List-Unsubscribe headers and a working *|UNSUB|*. */
  marketing: boolean
  bounceDomain: string
  dkim: DkimKey | undefined
  publicUrl: string
  linkSecret: string
}

export interface BodyRecipient {
  messageId: number
  email: string
  name: string
  /** Every merge value of this recipient: the body's global ones, theirs, and the reserved ones. */
  vars: Record<string, MergeValue>
  cc: string[]
  bcc: string[]
  trackOpens: boolean
  trackClicks: boolean
}

export interface CompiledBody {
  content: BodyContent
  subject: CompiledTemplate
  html: CompiledTemplate | undefined
  text: CompiledTemplate | undefined
  attachments: NonNullable<OutgoingMail['attachments']>
}

/** Done once per body (and per signing thread): merge tags compiled, attachments decoded. */
export function compileBody(content: BodyContent): CompiledBody {
  return {
    content,
    subject: compileTemplate(content.subject),
    html: content.html === null ? undefined : compileTemplate(content.html),
    text: content.text === null ? undefined : compileTemplate(content.text),
    attachments: content.attachments.map((a) => ({
      filename: a.name,
      contentType: a.type,
      content: Buffer.from(a.content, 'base64'),
    })),
  }
}

const address = (email: string, name?: string): MailAddress =>
  name ? { address: email, name } : { address: email }

/**
 * One recipient's message: merge tags filled in, then tracking (links after merging, so a link written as
 * `*|url|*` is tracked too), VERP and DKIM key. Deterministic for a message: the click page and the web version
 * render it again instead of storing it.
 */
export function renderBodyMail(c: CompiledBody, r: BodyRecipient): ComposedMessage {
  const ctx = { config: { publicUrl: c.content.publicUrl }, linkSecret: c.content.linkSecret }
  const t = trackingLinks(ctx)
  const data: MergeData = {
    vars: r.vars,
    special: (name) => {
      if (name === 'WEBVERSION') return t.webVersion(r.messageId)
      if (name === 'UNSUB' && c.content.marketing) return t.unsubscribe(r.messageId)
      return undefined
    },
  }
  return composeMessage(ctx, {
    messageId: r.messageId,
    from: address(c.content.fromEmail, c.content.fromName),
    replyTo: c.content.replyTo ?? undefined,
    to: address(r.email, r.name),
    cc: r.cc.map((a) => address(a)),
    bcc: r.bcc.map((a) => address(a)),
    subject: renderHeader(c.subject, data),
    html: c.html?.render(data, 'html'),
    text: c.text?.render(data, 'text'),
    trackOpens: r.trackOpens,
    trackClicks: r.trackClicks,
    marketing: c.content.marketing,
    bounceDomain: c.content.bounceDomain,
    dkim: c.content.dkim,
    attachments: c.attachments,
  })
}
