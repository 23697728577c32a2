// Pure mail code, in core so that the campaign signing threads compose without loading the messages module (and
// through it the database side of sending); issue 11.
import { tokenMac } from '../ids.js'
import type { DkimKey, MailAddress, OutgoingMail } from './mailer.js'
import { escapeHtml } from './merge-tags.js'
import { htmlToTextPart } from './text-part.js'
import { verpAddress } from './verp.js'
import { trackingLinks, withOpenPixel, type LinkCtx } from './tracking-links.js'

/** One rendered message for one recipient, before the tracking and envelope parts are added. */
export interface MessageContent {
  messageId: number
  from: MailAddress
  replyTo?: string | undefined
  to: MailAddress
  cc?: MailAddress[]
  bcc?: MailAddress[]
  subject: string
  html?: string | undefined
  text?: string | undefined
  /**
   * AMP for Email version, sent as it is: AMP allows no tracking pixel, and its links are kept as written so the
   * part stays valid AMP (a mail client that shows it does not count an open or a click).
   */
  amp?: string | undefined
  trackOpens: boolean
  trackClicks: boolean
  /** Campaign and automation mail: List-Unsubscribe (https + mailto) and one-click List-Unsubscribe-Post. */
  marketing: boolean
  /** Host of the VERP return path and the mailto unsubscribe address. */
  bounceDomain: string
  dkim?: DkimKey | undefined
  attachments?: OutgoingMail['attachments']
}

export interface ComposedMessage {
  mail: OutgoingMail
  /** Original URLs by click-tracking index (empty without click tracking). */
  links: string[]
  /** The web version: the HTML as sent, links tracked, without the open pixel (viewing it is no open). */
  webHtml: string | undefined
}

const HREF = /(<a\b[^>]*?\bhref\s*=\s*)(["'])(.*?)\2/gis

function decodeAttr(v: string): string {
  return v
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
}

/**
 * Rewrites every http(s) link but our own (unsubscribe, web version) to a signed click-tracking URL; the
 * click page will redirect only to the URL stored at that index, whatever a visitor appends.
 */
export function rewriteLinks(html: string, clickUrl: (i: number) => string, isOwn: (u: string) => boolean) {
  const links: string[] = []
  const index = new Map<string, number>()
  const out = html.replace(HREF, (whole, head: string, quote: string, raw: string) => {
    const url = decodeAttr(raw.trim())
    if (!/^https?:\/\//i.test(url) || isOwn(url)) return whole
    let i = index.get(url)
    if (i === undefined) {
      i = links.push(url) - 1
      index.set(url, i)
    }
    return `${head}${quote}${escapeHtml(clickUrl(i))}${quote}`
  })
  return { html: out, links }
}

/**
 * The Message-ID of ledger row `id`: the row and a MAC under the instance's secret (unique across installations)
 * of the row, its recipient and its subject, not a random part. A row sent again after its sender died mid-batch
 * is the same message, so its copies carry one Message-ID: receivers and mail clients drop the second, and a
 * report citing either copy names the ID the row keeps. The recipient and subject are in it because ids can come
 * round again (a database restored to an earlier point reuses them, under the same secret), and a mailbox drops a
 * message whose ID it has seen: a reused id makes the same ID only for the same person and subject. Base64url is
 * atext, so the ID is a plain dot-atom.
 */
export function messageIdHeader(
  secret: string,
  id: number,
  domain: string,
  recipient: string,
  subject: string,
): string {
  return `<${id}.${tokenMac(secret, 'message-id', `${id}\n${recipient}\n${subject}`)}@${domain}>`
}

/** Adds tracking, the VERP envelope, unsubscribe headers and the DKIM key to a rendered message. */
export function composeMessage(ctx: LinkCtx, c: MessageContent): ComposedMessage {
  const t = trackingLinks(ctx)
  let html = c.html
  let links: string[] = []
  if (html !== undefined && c.trackClicks) {
    const r = rewriteLinks(html, (i) => t.click(c.messageId, i), t.isOwn)
    html = r.html
    links = r.links
  }
  // The text part follows the tracked HTML, so its links count clicks too; the pixel is an image it skips.
  const text = c.text ?? (html !== undefined ? htmlToTextPart(html) : undefined)
  const webHtml = html
  if (html !== undefined && c.trackOpens) html = withOpenPixel(html, t.open(c.messageId))
  const headers: Record<string, string> = {}
  if (c.marketing) {
    headers['List-Unsubscribe'] =
      `<${t.unsubscribe(c.messageId)}>, <${t.unsubscribeMailto(c.messageId, c.bounceDomain)}>`
    headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click'
  }
  const mail: OutgoingMail = {
    from: c.from,
    to: [c.to],
    subject: c.subject,
    headers,
    returnPath: verpAddress(ctx.linkSecret, `m${c.messageId}`, c.bounceDomain),
    messageId: messageIdHeader(ctx.linkSecret, c.messageId, c.bounceDomain, c.to.address, c.subject),
  }
  if (c.cc?.length) mail.cc = c.cc
  if (c.bcc?.length) mail.bcc = c.bcc
  if (c.replyTo) mail.replyTo = c.replyTo
  if (html !== undefined) mail.html = html
  if (text !== undefined) mail.text = text
  if (c.amp !== undefined) mail.amp = c.amp
  if (c.dkim) mail.dkim = c.dkim
  if (c.attachments?.length) mail.attachments = c.attachments
  return { mail, links, webHtml }
}
