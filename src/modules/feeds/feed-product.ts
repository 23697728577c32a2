/** One product as a feed file describes it, before it is stored (feed_products). */
export interface FeedProduct {
  /** The shop's product id: what its transaction items carry as `code`. */
  id: string
  title: string
  url: string
  image: string
  /** A plain decimal ("1299.90") or null when the feed gave none that reads as a number. */
  price: string | null
  categories: string[]
  /** Everything else the feed said of the product, by element or column name. */
  extra: Record<string, string>
}

/** The feed cannot be read: malformed, of an unknown kind, or lacking what a product needs. */
export class FeedParseError extends Error {}

/** Longest value kept of any one field; feeds carry long descriptions nobody needs whole here. */
export const MAX_FIELD_CHARS = 4000
/** Most extra fields kept per product. */
const MAX_EXTRA_FIELDS = 40

/** NUL cannot be stored in PostgreSQL text or jsonb; trimmed and bounded too. */
export function clean(value: string | undefined): string {
  if (!value) return ''
  const cut = value
    .replace(/\u0000/g, '')
    .trim()
    .slice(0, MAX_FIELD_CHARS)
  // A cut inside a surrogate pair (an emoji at the limit) leaves half a character, which jsonb refuses: the
  // refresh failed as the server's fault, and again on every try, since the feed does not change.
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut
}

/**
 * A price as a plain decimal: "12.50 CZK" → "12.50", "1 299,90 Kč" → "1299.90", "1,299.90" → "1299.90".
 * The last of `.` and `,` is the decimal mark when both occur; a lone comma is one when 1–2 digits follow it.
 */
export function parsePrice(raw: string | undefined): string | null {
  const m = /-?\d[\d\s\u00a0.,]*/.exec(raw ?? '')
  if (!m) return null
  let s = m[0].replace(/[\s\u00a0]/g, '').replace(/[.,]+$/, '')
  const lastDot = s.lastIndexOf('.')
  const lastComma = s.lastIndexOf(',')
  if (lastDot >= 0 && lastComma >= 0) {
    const mark = lastDot > lastComma ? '.' : ','
    const other = mark === '.' ? ',' : '.'
    s = s.split(other).join('').replace(mark, '.')
  } else if (lastComma >= 0) {
    const parts = s.split(',')
    s = parts.length === 2 && parts[1]!.length <= 2 ? parts.join('.') : parts.join('')
  } else if (s.split('.').length > 2) {
    s = s.split('.').join('')
  }
  return /^-?\d{1,15}(\.\d{1,6})?$/.test(s) ? s : null
}

/** "Electronics | Phones > Smart" → ["Electronics", "Phones", "Smart"]. */
export function splitCategories(raw: string | undefined): string[] {
  if (!raw) return []
  return raw
    .split(/[|>]/)
    .map((c) => clean(c))
    .filter(Boolean)
    .slice(0, 20)
}

/** The fields not mapped to a product column, bounded in count. */
export function extraOf(fields: Map<string, string>, used: ReadonlySet<string>): Record<string, string> {
  const extra: Record<string, string> = {}
  let n = 0
  for (const [k, v] of fields) {
    if (used.has(k) || !v) continue
    if (++n > MAX_EXTRA_FIELDS) break
    extra[k] = v
  }
  return extra
}

/** The first of `names` with a non-empty value. */
export function firstOf(fields: Map<string, string>, names: readonly string[]): string {
  for (const n of names) {
    const v = fields.get(n)
    if (v) return v
  }
  return ''
}
