import type { DkimKey, MailAddress, OutgoingMail } from '../../core/mail/mailer.js'
import {
  compileTemplate,
  renderHeader,
  type CompiledTemplate,
  type MergeData,
  type MergeValue,
} from '../../core/mail/merge-tags.js'
import { composeMessage, type ComposedMessage } from '../../core/mail/compose-message.js'
import { htmlToTextPart } from '../../core/mail/text-part.js'
import { trackingLinks, type TrackingLinks } from '../../core/mail/tracking-links.js'
import { fillLinks, linksAsPlaceholders } from './render.js'

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
  ampHtml: string | null
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
  /** Display names of cc addresses, by address (BatchCopies). */
  ccNames?: Record<string, string>
  trackOpens: boolean
  trackClicks: boolean
}

export interface CompiledBody {
  content: BodyContent
  subject: CompiledTemplate
  html: CompiledTemplate | undefined
  text: CompiledTemplate | undefined
  amp: CompiledTemplate | undefined
  attachments: NonNullable<OutgoingMail['attachments']>
  /**
   * A body with HTML and no text whose text part can be made once (textOnce): that text as a template, with
   * tracked links as placeholders (`tracked`) or as written (`plain`); made on first use.
   */
  textFromHtml: { tracked?: CompiledTemplate; plain?: CompiledTemplate } | undefined
}

/** A merge tag inside markup (`<a href="*|url|*">`): its value can change the HTML's links. */
const TAG_IN_MARKUP = /<[^>]*\*\|[^>]*>/

/**
 * Whether a body's text part can be made from its HTML once for all its recipients, as campaigns do, instead of
 * converting every recipient's HTML (html-to-text was about 5 % of the machine while transactional mail drained,
 * profiled on issue 11). It can when the values cannot change the HTML's structure or links: only escaped values
 * (plainValuesOnly), none inside markup. Otherwise each message's text is made from its own HTML, as before.
 * Made once, the text differs from a per-message conversion only in where lines wrap (a value is not wrapped) and
 * in keeping a value's line breaks.
 */
const textOnce = (content: BodyContent, html: CompiledTemplate | undefined): boolean =>
  content.text === null && html !== undefined && html.plainValuesOnly && !TAG_IN_MARKUP.test(content.html!)

/** Done once per body (and per signing thread): merge tags compiled, attachments decoded. */
export function compileBody(content: BodyContent): CompiledBody {
  const html = content.html === null ? undefined : compileTemplate(content.html)
  return {
    content,
    subject: compileTemplate(content.subject),
    html,
    text: content.text === null ? undefined : compileTemplate(content.text),
    amp: content.ampHtml === null ? undefined : compileTemplate(content.ampHtml),
    textFromHtml: textOnce(content, html) ? {} : undefined,
    attachments: content.attachments.map((a) => ({
      filename: a.name,
      contentType: a.type,
      content: Buffer.from(a.content, 'base64'),
    })),
  }
}

/**
 * The text part of a body that textOnce allows, for one recipient: the HTML's text, converted on first use,
 * with the recipient's values and, when clicks are tracked, the links of their message by the same indices
 * as composeMessage gives the HTML's (the same links in the same order: the values cannot add or change one).
 */
function textFromHtml(c: CompiledBody, r: BodyRecipient, data: MergeData, t: TrackingLinks): string {
  const made = c.textFromHtml!
  const html = c.content.html!
  if (!r.trackClicks) return (made.plain ??= compileTemplate(htmlToTextPart(html))).render(data, 'text')
  made.tracked ??= compileTemplate(htmlToTextPart(linksAsPlaceholders(html, t.isOwn).html))
  return fillLinks(made.tracked.render(data, 'text'), (i) => t.click(r.messageId, i))
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
    cc: r.cc.map((a) => address(a, r.ccNames?.[a])),
    bcc: r.bcc.map((a) => address(a)),
    subject: renderHeader(c.subject, data),
    html: c.html?.render(data, 'html'),
    text: c.textFromHtml ? textFromHtml(c, r, data, t) : c.text?.render(data, 'text'),
    amp: c.amp?.render(data, 'html'),
    trackOpens: r.trackOpens,
    trackClicks: r.trackClicks,
    marketing: c.content.marketing,
    bounceDomain: c.content.bounceDomain,
    dkim: c.content.dkim,
    attachments: c.attachments,
  })
}
