import type { Config } from '../config.js'
import { signToken, verifyToken } from '../ids.js'
import { escapeHtml } from './merge-tags.js'

/** Only what links need, so a signing thread can build them without a whole context. */
export interface LinkCtx {
  config: Pick<Config, 'publicUrl'>
  linkSecret: string
}

export type TrackingLinks = ReturnType<typeof makeTrackingLinks>

/**
 * The link makers of the last few (public URL, secret) pairs: campaign mail asks for them once or twice per
 * message, and making them anew (seven closures) showed in the signing threads' profile.
 */
const recent = new Map<string, TrackingLinks>()
const RECENT_MAX = 8

/** Signed links in mail; each purpose has its own signature so one link kind cannot stand in for another. */
export function trackingLinks(ctx: LinkCtx): TrackingLinks {
  const key = `${ctx.config.publicUrl}\n${ctx.linkSecret}`
  let links = recent.get(key)
  if (!links) {
    links = makeTrackingLinks(ctx.config.publicUrl, ctx.linkSecret)
    if (recent.size >= RECENT_MAX) recent.delete(recent.keys().next().value!)
    recent.set(key, links)
  }
  return links
}

function makeTrackingLinks(publicUrl: string, linkSecret: string) {
  const ctx = { config: { publicUrl }, linkSecret }
  const base = ctx.config.publicUrl
  const s = (purpose: string, payload: string) => signToken(ctx.linkSecret, purpose, payload)
  return {
    open: (messageId: number) => `${base}/t/o/${s('open', String(messageId))}.gif`,
    /**
     * A link of the mail by index: the message's one signed token for its links, then the index. The index is
     * not signed, as anyone holding one of these links holds the mail and so all of its links; a token of its
     * own for each link was most of a campaign message's HMACs (issue 11: signing threads' profile). Links
     * made before (payload `<message>.<index>`, purpose click) still read.
     */
    click: (messageId: number, index: number) => `${base}/t/c/${s('links', String(messageId))}.${index}`,
    /**
     * A tracked link whose target was picked for this message as it was rendered (a product recommendation):
     * not one of the mail's links by index, so the target rides in the signed token.
     */
    clickTo: (messageId: number, url: string) => `${base}/t/c/${s('click', `${messageId}.u:${url}`)}`,
    unsubscribe: (messageId: number) => `${base}/u/${s('unsub', String(messageId))}`,
    webVersion: (messageId: number) => `${base}/w/${s('web', String(messageId))}`,
    /** A campaign's public web version (`archive_url`), for nobody in particular. */
    archive: (campaignId: number) => `${base}/archive/${s('archive', String(campaignId))}`,
    /** Tokens are URL-safe and local-part-safe, so the mailto variant can carry the same token. */
    unsubscribeMailto: (messageId: number, bounceDomain: string) =>
      `mailto:unsubscribe+${s('unsub', String(messageId))}@${bounceDomain}`,
    /** Our own links are never rewritten for click tracking. */
    isOwn: (url: string) => url.startsWith(`${base}/`),
  }
}

const ID = /^[1-9]\d{0,17}$/

/** Message (or, for 'archive', campaign) id from a token of the purpose; null when tampered or malformed. */
export function readMessageToken(ctx: LinkCtx, purpose: string, token: string): number | null {
  const payload = verifyToken(ctx.linkSecret, purpose, token)
  return payload && ID.test(payload) ? Number(payload) : null
}

export type ClickRef = { messageId: number; index: number } | { messageId: number; url: string }

/** A click link's message and its link by index (`click`) or its own target (`clickTo`); null when tampered. */
export function readClickToken(ctx: LinkCtx, token: string): ClickRef | null {
  // Base64url has no dot: a signed token is `payload.mac`, and a link by index (`click`) adds `.index`.
  const byIndex = /^([^.]+\.[^.]+)\.(\d{1,4})$/.exec(token)
  if (byIndex) {
    const id = verifyToken(ctx.linkSecret, 'links', byIndex[1]!)
    return id && ID.test(id) ? { messageId: Number(id), index: Number(byIndex[2]) } : null
  }
  const payload = verifyToken(ctx.linkSecret, 'click', token)
  if (!payload) return null
  const m = /^([1-9]\d{0,17})\.(\d{1,4})$/.exec(payload)
  if (m) return { messageId: Number(m[1]), index: Number(m[2]) }
  const t = /^([1-9]\d{0,17})\.u:(https?:\/\/.+)$/is.exec(payload)
  return t ? { messageId: Number(t[1]), url: t[2]! } : null
}

/** Where withOpenPixel puts the pixel: before the first `</body>`. */
export const BODY_END = /<\/body\s*>/i

/** The open pixel at the end of the body (or of the document when it has no `</body>`). */
export function withOpenPixel(html: string, src: string): string {
  const img = openPixel(src)
  const end = html.search(BODY_END)
  return end < 0 ? `${html}${img}` : `${html.slice(0, end)}${img}${html.slice(end)}`
}

/** The open pixel's tag. */
export function openPixel(src: string): string {
  return `<img src="${escapeHtml(src)}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`
}
