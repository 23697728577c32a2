import { escapeHtml, compileTemplate, renderHeader } from '../../core/mail/merge-tags.js'
import type { CompiledTemplate, MergeData, MergeValue, RenderMode } from '../../core/mail/merge-tags.js'
import type { DkimKey, OutgoingMail } from '../../core/mail/mailer.js'
import { inlineCss } from '../../core/mail/inline-css.js'
import { htmlToTextPart } from '../../core/mail/text-part.js'
import { composeMessage, rewriteLinks } from '../../core/mail/compose-message.js'
import { BODY_END, openPixel, trackingLinks } from '../../core/mail/tracking-links.js'
import { QpPart, qpPiece } from '../../core/mail/qp-pieces.js'

/** Everything a campaign's mail is made of; plain data, so it can cross to a signing thread. */
export interface CampaignContent {
  campaignId: number
  subject: string
  fromName: string
  fromEmail: string
  replyTo: string
  html: string
  plainText: string | null
  bounceDomain: string
  dkim: DkimKey | undefined
  publicUrl: string
  linkSecret: string
}

export interface CampaignRecipient {
  messageId: number
  email: string
  name: string
  vars: Record<string, MergeValue>
}

// Tracked links are written into the template once as placeholders on a reserved domain (RFC 2606), which
// survive merge-tag rendering and the HTML-to-text conversion, and become signed per-recipient URLs last.
const PLACEHOLDER = 'https://tidings-click.invalid/'
const PLACEHOLDER_RE = /https:\/\/tidings-click\.invalid\/(\d+)/g

/** The HTML with every tracked link (rewriteLinks decides which) a placeholder by its index; the links by index. */
export const linksAsPlaceholders = (html: string, isOwn: (url: string) => boolean) =>
  rewriteLinks(html, (i) => `${PLACEHOLDER}${i}`, isOwn)

/** A rendering's placeholders replaced by the recipient's own links. */
export const fillLinks = (text: string, link: (i: number) => string) =>
  text.replace(PLACEHOLDER_RE, (_, i: string) => link(Number(i)))

/**
 * The campaign's HTML with CSS inlined and every trackable (http/https) link replaced, and the links by index.
 * A link with merge tags in it (`https://shop.example/?e=*|EMAIL|*`) is stored as written and rendered for
 * the recipient when clicked (personalLinks). Left untracked: our own pages, links that carry one of them
 * (`https://shop.example/prefs?u=*|UNSUB|*`: the message's own link is filled in when it is sent), and links
 * whose merge tags an editor URL-encoded (`*%7CEMAIL%7C*`), which no rendering would fill.
 */
export function trackableHtml(content: Pick<CampaignContent, 'html' | 'publicUrl'>) {
  const isOwn = (url: string) =>
    url.startsWith(`${content.publicUrl}/`) || /\*%7C|\*\|\s*(?:UNSUB|WEBVERSION)\b/i.test(url)
  return linksAsPlaceholders(inlineCss(content.html), isOwn)
}

// Both *|TAG|* and {*|TAG|*} hold this.
const MERGE_TAG = '*|'

/** A campaign's links by index: those with merge tags compiled, the others as they are. */
export type LinkTemplates = (string | CompiledTemplate)[]

/** The links with merge tags compiled once; null when none has any (every recipient's links are the same). */
export function compileLinks(links: readonly string[]): LinkTemplates | null {
  if (!links.some((l) => l.includes(MERGE_TAG))) return null
  return links.map((l) => (l.includes(MERGE_TAG) ? compileTemplate(l) : l))
}

/**
 * A campaign's links as one recipient's mail points to them: merge tags filled in from their values, as
 * written (a value is not URL-encoded, as in the mail's text).
 */
export function personalLinks(templates: LinkTemplates, vars: Record<string, MergeValue>): string[] {
  const data: MergeData = { vars }
  return templates.map((t) => (typeof t === 'string' ? t : t.render(data, 'text').trim()))
}

/** Where, in a template's text, the open pixel goes (before the first `</body>`). */
const PIXEL_HERE = -1

/**
 * A stretch of a template's text in mail: quoted-printable, encoded once per campaign (qpPiece), or the index
 * of a tracked link whose signed URL is the recipient's own, or PIXEL_HERE.
 */
type Segment = string | number

function linkSegments(text: string, out: Segment[]): void {
  let last = 0
  for (const m of text.matchAll(PLACEHOLDER_RE)) {
    if (m.index > last) out.push(qpPiece(text.slice(last, m.index)))
    out.push(Number(m[1]))
    last = m.index + m[0].length
  }
  if (last < text.length) out.push(qpPiece(text.slice(last)))
}

/** Each of a template's texts (by renderParts' index) as segments. */
function segmentsOf(t: CompiledTemplate, pixel: boolean): Segment[][] {
  return t.texts.map((text) => {
    const out: Segment[] = []
    const at = pixel ? text.search(BODY_END) : -1
    if (at < 0) linkSegments(text, out)
    else {
      linkSegments(text.slice(0, at), out)
      out.push(PIXEL_HERE)
      linkSegments(text.slice(at), out)
    }
    return out
  })
}

export interface CompiledCampaign {
  content: CampaignContent
  links: string[]
  subject: CompiledTemplate
  html: CompiledTemplate
  text: CompiledTemplate
  /** The templates' texts as mail carries them, encoded once (renderCampaignMail). */
  htmlSegments: Segment[][]
  textSegments: Segment[][]
}

/** Done once per campaign (and per signing thread): CSS, links, text part and merge tags compiled. */
export function compileCampaign(content: CampaignContent): CompiledCampaign {
  const { html: source, links } = trackableHtml(content)
  const html = compileTemplate(source)
  const text = compileTemplate(content.plainText ?? htmlToTextPart(source))
  return {
    content,
    links,
    subject: compileTemplate(content.subject),
    html,
    text,
    htmlSegments: segmentsOf(html, true),
    textSegments: segmentsOf(text, false),
  }
}

function personalise(c: CompiledCampaign, r: CampaignRecipient) {
  const ctx = { config: { publicUrl: c.content.publicUrl }, linkSecret: c.content.linkSecret }
  const t = trackingLinks(ctx)
  const data: MergeData = {
    vars: r.vars,
    special: (name) => {
      if (name === 'UNSUB') return t.unsubscribe(r.messageId)
      if (name === 'WEBVERSION') return t.webVersion(r.messageId)
      return undefined
    },
  }
  const click = (i: number) => t.click(r.messageId, i)
  return { ctx, links: t, data, click }
}

/** The recipient's HTML with tracked links and no open pixel: the web version of their mail. */
export function renderCampaignHtml(c: CompiledCampaign, r: CampaignRecipient): string {
  const { data, click } = personalise(c, r)
  return fillLinks(c.html.render(data, 'html'), (i) => escapeHtml(click(i)))
}

/** The recipient's subject as their mail carries it (the email log names a test copy by it). */
export function renderCampaignSubject(c: CompiledCampaign, r: CampaignRecipient): string {
  return renderHeader(c.subject, personalise(c, r).data)
}

/**
 * A part of one recipient's mail, quoted-printable: the template's text as encoded once per campaign, the
 * recipient's values and links encoded here; the open pixel (when given) before the first `</body>` of the
 * template's own text, or at the end.
 */
function encodedPart(
  t: CompiledTemplate,
  segments: Segment[][],
  data: MergeData,
  mode: RenderMode,
  link: (i: number) => string,
  pixel?: string,
): QpPart {
  const parts: (number | string)[] = []
  t.renderParts(data, mode, parts)
  const out = new QpPart()
  let pixelDone = pixel === undefined
  for (const p of parts) {
    if (typeof p === 'string') {
      out.text(p)
      continue
    }
    for (const s of segments[p]!) {
      if (typeof s !== 'number') out.add(s)
      else if (s !== PIXEL_HERE) out.text(link(s))
      else if (!pixelDone) {
        out.text(pixel!)
        pixelDone = true
      }
    }
  }
  if (!pixelDone) out.text(pixel!)
  return out
}

/** One recipient's message: personalised, tracked, with unsubscribe headers, VERP and DKIM key. */
export function renderCampaignMail(c: CompiledCampaign, r: CampaignRecipient): OutgoingMail {
  const { ctx, links, data, click } = personalise(c, r)
  const pixel = openPixel(links.open(r.messageId))
  const html = encodedPart(c.html, c.htmlSegments, data, 'html', (i) => escapeHtml(click(i)), pixel)
  const text = encodedPart(c.text, c.textSegments, data, 'text', click)
  const { mail } = composeMessage(ctx, {
    messageId: r.messageId,
    from: { name: c.content.fromName, address: c.content.fromEmail },
    replyTo: c.content.replyTo || undefined,
    to: r.name ? { name: r.name, address: r.email } : { address: r.email },
    subject: renderHeader(c.subject, data),
    // The parts come encoded (below), the open pixel and tracked links in them.
    trackOpens: false,
    trackClicks: false,
    marketing: true,
    bounceDomain: c.content.bounceDomain,
    dkim: c.content.dkim,
  })
  mail.encoded = { text, html }
  return mail
}
