import type { AppContext } from '../../core/context.js'
import { escapeHtml, htmlBlockVar, tagArguments } from '../../core/mail/merge-tags.js'
import { recommend, type RecommendedRow } from './recommend.js'
import { recommendersByIds } from './recommenders.repo.js'

/** Products a tag shows when it gives no count, and the most it may ask for. */
export const DEFAULT_TAG_COUNT = 4
export const MAX_TAG_COUNT = 20

/**
 * The `*|RECOMMEND:<recommender_id>:<n>|*` tags of a mail (`:<n>` optional), each with the merge variable it
 * reads (`recommend:12:4`). A tag whose argument names no recommender is kept with `recommenderId` null: it
 * renders empty, and no contact field of that name can stand in for it. Found once per batch.
 */
export type RecommendTags = { name: string; recommenderId: number | null; count: number }[]

const MAX_ID = 2_147_483_647

export function recommendTags(texts: readonly (string | null | undefined)[]): RecommendTags {
  return tagArguments(texts, 'RECOMMEND').map((arg) => {
    const name = `recommend:${arg.toLowerCase()}`
    const m = /^(\d{1,10})\s*(?::\s*(\d{1,3}))?$/.exec(arg)
    const id = m ? Number(m[1]) : 0
    const count = m?.[2] === undefined ? DEFAULT_TAG_COUNT : Number(m[2])
    const valid = id >= 1 && id <= MAX_ID && count >= 1 && count <= MAX_TAG_COUNT
    return { name, recommenderId: valid ? id : null, count }
  })
}

type Product = Pick<RecommendedRow, 'title' | 'url' | 'image' | 'price'>

/** Only web links become links and images: a feed's `javascript:` URL must not reach a mail. */
const webUrl = (u: string) => (/^https?:\/\//i.test(u.trim()) ? u.trim() : '')

/** How a product's page is linked: as it is, or through a click-tracking link of the message. */
type Linker = (url: string) => string
const asIs: Linker = (url) => url

/** A simple inline-styled table (image, title linked to the product, price), every value escaped. */
export function productsHtml(products: readonly Product[], linkTo: Linker = asIs): string {
  if (products.length === 0) return ''
  const rows = products.map((p) => {
    const page = webUrl(p.url)
    const url = page ? escapeHtml(linkTo(page)) : ''
    const image = webUrl(p.image)
    const title = escapeHtml(p.title)
    const link = (inner: string, style = '') =>
      url ? `<a href="${url}" style="${style}">${inner}</a>` : inner
    const img = image
      ? link(
          `<img src="${escapeHtml(image)}" alt="${title}" width="120" style="display:block;border:0;width:120px;max-width:120px;height:auto">`,
        )
      : ''
    const price = p.price === null ? '' : `<br><span style="color:#333333">${escapeHtml(p.price)}</span>`
    return (
      `<tr><td style="padding:8px;width:120px;vertical-align:top">${img}</td>` +
      `<td style="padding:8px;vertical-align:top;font-family:Arial,Helvetica,sans-serif;font-size:14px">` +
      `${link(title, 'color:#1a0dab;font-weight:bold;text-decoration:none')}${price}</td></tr>`
    )
  })
  return (
    '<table role="presentation" cellpadding="0" cellspacing="0" border="0" ' +
    `style="border-collapse:collapse;width:100%;max-width:600px">${rows.join('')}</table>`
  )
}

/** The text part: a title line and a URL line per product. */
export function productsText(products: readonly Product[], linkTo: Linker = asIs): string {
  return products.map((p) => (webUrl(p.url) ? `${p.title}\n${linkTo(webUrl(p.url))}` : p.title)).join('\n\n')
}

type Ctx = Pick<AppContext, 'db'>

/**
 * A message's linker: each product page tracked once per message, though the HTML links it twice (image and
 * title) and the text once more (each tracked link is an HMAC over the URL, on the sender's main thread).
 */
function linkerOf(track: RecommendBatch['track'], messageId: number): Linker {
  if (!track || messageId <= 0) return asIs
  const tracked = new Map<string, string>()
  return (url) => {
    let link = tracked.get(url)
    if (link === undefined) tracked.set(url, (link = track(messageId, url)))
    return link
  }
}

export interface RecommendBatch {
  accountId: number
  recipients: { messageId: number; email: string }[]
  /**
   * The click-tracking link of a message to a product page. The block is inserted as the mail is rendered,
   * after its own links were numbered for tracking, so its links are tracked here, each carrying its target.
   */
  track?: (messageId: number, url: string) => string
}

/**
 * Each mail's recommendation variables: for every tag, the text form under its name and the HTML table under
 * its HTML-block name (merge-tags.ts inserts that raw in HTML). One recommend() per recommender named for the
 * whole batch (recommend.ts), none without the tag. A recommender of another account, or none, renders empty.
 */
export async function recommendationVars(
  ctx: Ctx,
  tags: RecommendTags,
  batch: RecommendBatch,
): Promise<Map<number, Record<string, string>>> {
  const vars = new Map<number, Record<string, string>>()
  if (tags.length === 0 || batch.recipients.length === 0) return vars
  const ids = [...new Set(tags.flatMap((t) => (t.recommenderId === null ? [] : [t.recommenderId])))]
  const models = ids.length ? await recommendersByIds(ctx.db, batch.accountId, ids) : []
  const emailOf = (e: string) => e.trim().toLowerCase()
  const emails = [...new Set(batch.recipients.map((r) => emailOf(r.email)))]
  const byModel = new Map<number, Map<string, RecommendedRow[]>>()
  for (const model of models) {
    const count = Math.max(...tags.filter((t) => t.recommenderId === model.id).map((t) => t.count))
    byModel.set(model.id, await recommend(ctx.db, model, emails, count))
  }
  for (const r of batch.recipients) {
    const own: Record<string, string> = {}
    const linkTo = linkerOf(batch.track, r.messageId)
    for (const tag of tags) {
      const products = (tag.recommenderId === null ? undefined : byModel.get(tag.recommenderId))
        ?.get(emailOf(r.email))
        ?.slice(0, tag.count)
      own[tag.name] = products ? productsText(products, linkTo) : ''
      own[htmlBlockVar(tag.name)] = products ? productsHtml(products, linkTo) : ''
    }
    vars.set(r.messageId, own)
  }
  return vars
}
