import qs from 'qs'
import { MAX_JSON_DEPTH, nestedDeeperThan, TOO_DEEP } from './json-depth.js'
import { noteFormText } from './nul-characters.js'
import { textBodyParser } from './text-body.js'

export const FORM_TYPE = 'application/x-www-form-urlencoded'

/**
 * Fields a form body may hold: a 3,000-entry subscribe-bulk of a dozen fields each, or 10,000 coupon codes, with
 * room to spare. qs would drop the fields past its limit without a word; they are counted first and the body
 * refused instead (400). It also bounds every list's length: an entry takes a field.
 */
export const FORM_FIELDS_MAX = 100_000

/**
 * Percent escapes read as PHP's urldecode reads them, as bytes, and the bytes as UTF-8, with U+FFFD for what is no
 * character: as the raw body text is read, and as a JSON body's lone surrogate is stored (lone-surrogates.ts).
 * qs's own decoder leaves a whole value undecoded when one escape in it is not UTF-8 (`%ED%A0%80`, a surrogate).
 * So a form body never holds a lone surrogate. `+` is a space (http_build_query's default, RFC 1738).
 */
const ESCAPES = /(?:%[0-9a-fA-F]{2})+/g
function decodeFormText(text: string): string {
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text
  if (!spaced.includes('%')) return spaced
  try {
    return decodeURIComponent(spaced) // native and fast: what nearly every value is
  } catch {
    return spaced.replace(ESCAPES, (run) => Buffer.from(run.replaceAll('%', ''), 'hex').toString('utf8'))
  }
}

/**
 * qs reads PHP's bracket syntax (`subscriber_data[tags][0]=vip`) into nested objects. Every option below departs
 * from qs's defaults on purpose or pins one that matters:
 */
const OPTIONS: qs.IParseOptions = {
  // Objects without a prototype, so every key is data: a custom field named `toString` or `constructor` is kept,
  // as in a JSON body (with ordinary objects, qs drops every key naming a member of Object.prototype, silently).
  // phpObjects turns them into ordinary objects and drops what the JSON parser drops (`__proto__`, a
  // `constructor` holding `prototype`). allowPrototypes only applies to ordinary objects; off all the same.
  plainObjects: true,
  allowPrototypes: false,
  // 64 bracket groups make 65 levels (the body is one and holds none), and a key with more throws rather than
  // keep its rest as one literal key: either way the body is refused as a JSON body nested too deeply is, by
  // nestedDeeperThan below, the one rule for both.
  depth: MAX_JSON_DEPTH,
  strictDepth: true,
  // Every index is kept as an object key, and phpObjects makes the lists afterwards. A list qs builds costs its
  // length at every field merged into it: with a limit of 10,000 (the longest list a body takes, coupon codes),
  // a 3,000-entry subscribe-bulk took 1.3 s to parse and 1.8 MB of fields aimed at index 9,999 took 40 s; so
  // none is built, and parsing stays linear (about 0.2 s for that bulk, against 4 ms as JSON).
  arrayLimit: 0,
  // Counted before parsing (formBodyParser), so qs never drops any.
  parameterLimit: Infinity,
  // A key given twice keeps its last value, as PHP reads a form; `tags[]=a&tags[]=b` still appends.
  duplicates: 'last',
  // Dots and commas are data (a custom field `a.b`, a name `Novák, Jan`).
  allowDots: false,
  comma: false,
  decoder: decodeFormText,
}

/** Keys a JSON body loses to secure-json-parse (json-text.ts), dropped from a form body alike. */
const unsafeKey = (key: string, value: unknown) =>
  key === '__proto__' ||
  (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value)

/**
 * qs's prototype-less objects as the ordinary objects and lists JSON.parse would give for the same data. Every
 * object whose keys are exactly 0…n-1 becomes the list of its values, as PHP's json_encode writes an array; an
 * index list with gaps (after unset() or array_filter()) stays an object of index keys, as json_encode writes
 * it, which the fields that take PHP's lists read as a list (tags, transaction_items, bulk subscriber_data).
 * Recursive: the depth is already checked.
 */
function phpObjects(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value
  const o = value as Record<string, unknown>
  const keys = Object.keys(o).filter((k) => !unsafeKey(k, o[k]))
  // Index keys come first and in ascending order in any object, so a list's keys are "0", "1"… in place.
  if (keys.length > 0 && keys.every((k, i) => k === String(i))) return keys.map((k) => phpObjects(o[k]))
  const out: Record<string, unknown> = {}
  // `__proto__` is gone, so each assignment makes an own property (`toString` included).
  for (const k of keys) out[k] = phpObjects(o[k])
  return out
}

/** The parsed body, or why it is refused (in the words of json-text.ts for the rule both share). */
export function parseFormText(text: string): { value: unknown } | { error: string } {
  let value: unknown
  try {
    value = qs.parse(text, OPTIONS)
  } catch (err) {
    // strictDepth's RangeError: with no parameter limit and throwOnLimitExceeded off, no other limit throws.
    if (err instanceof RangeError) return { error: TOO_DEEP }
    throw err
  }
  if (nestedDeeperThan(value, MAX_JSON_DEPTH)) return { error: TOO_DEEP }
  return { value: phpObjects(value) }
}

/** Fields in a form body: one per `&`, counted without building anything. */
function fieldCount(text: string): number {
  let n = 1
  for (let at = text.indexOf('&'); at !== -1; at = text.indexOf('&', at + 1)) n++
  return n
}

/**
 * The `application/x-www-form-urlencoded` body parser (any charset: the text is read as UTF-8). Early PHP
 * clients post `http_build_query($data)` as a string, which curl sends as a form; it is read into what the JSON
 * body would be, so the route's schema, its coercion (all values are text) and the NUL rule apply as to JSON.
 */
export const formBodyParser = textBodyParser((text, req) => {
  if (fieldCount(text) > FORM_FIELDS_MAX)
    return { refused: `The request body has more than ${FORM_FIELDS_MAX} fields.` }
  noteFormText(req, text)
  const read = parseFormText(text)
  return 'error' in read ? { refused: `The request body is ${read.error}.` } : read
})
