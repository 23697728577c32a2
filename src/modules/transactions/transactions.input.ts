import { isValidEmail, normalizeEmail } from '../../core/http/email.js'
import type { FieldErrorBag } from '../../core/http/errors.js'
import { parseDay, parseSqlDateTime } from '../../core/http/formats.js'
import type { DeleteOneBodyT, TransactionInputT, TransactionItemsInputT } from './transactions.schemas.js'

/** A purchase as it is stored: money as decimal text (exact), the time as an instant. */
export interface TransactionValues {
  orderId: string
  email: string
  shop: string
  amount: string
  tax: string
  shipping: string
  city: string
  county: string | null
  country: string
  status: string
  props: unknown
  occurredAt: Date
  /** False when the sender gave no timestamp (`occurredAt` is then now): an overwrite keeps the stored time. */
  timeGiven: boolean
}

export interface ItemValues {
  code: string
  title: string
  category: string
  price: string
  amount: string
  categories: string[]
}

export interface PurchaseValues {
  transaction: TransactionValues
  items: ItemValues[]
}

/** Up to 15 integer digits and 10 decimals: what `numeric` stores exactly and a JSON number reads back. */
const DECIMAL = /^[-+]?(\d{1,15})(\.\d{0,10})?$|^[-+]?\.\d{1,10}$/
/** JSON number syntax (with a leading + allowed). */
const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?$/i
/** Unix seconds, as sent by PHP (`strtotime`) or a tag manager (`getTimestamp() / 1000`, with a fraction). */
const UNIX = /^\d{1,13}(\.\d+)?$/
/** Seconds past this are taken for milliseconds (JavaScript's Date.now()): 5138 AD in seconds. */
const MS_THRESHOLD = 1e11
const MAX_TIME = Date.UTC(9999, 11, 31)

/**
 * A JSON number or numeric string as exact decimal text; blank or absent is `fallback`. A JSON number has
 * already been read as a double: its shortest text (what JSON.stringify gives) is the decimal the sender
 * wrote, so 0.1 is stored as 0.1, not 0.1000000000000000055.
 */
function decimal(v: number | string | null | undefined, fallback: string): string | undefined {
  if (v === undefined || v === null) return fallback
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || Math.abs(v) >= 1e15) return undefined
    const text = String(v)
    return /e/i.test(text) ? v.toFixed(10).replace(/\.?0+$/, '') : text
  }
  const s = v.trim().replace(',', '.')
  if (s === '') return fallback
  if (DECIMAL.test(s)) return s
  // Longer fractions or an exponent ("1e3"): read as a JSON number would be.
  return NUMBER.test(s) ? decimal(Number(s), fallback) : undefined
}

/** ISO 8601 as shops write it: the zone may be left out (WooCommerce's REST dates), and then it is UTC. */
const ISO = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i

/**
 * A purchase time that says "none": absent, null, blank, or PHP's strtotime() of a date it cannot read, which is
 * `false` in JSON and `0` once cast to an integer or form-encoded ("0"). No shop has an order from 1970-01-01.
 */
function noTime(v: number | string | boolean | null | undefined): boolean {
  if (v === undefined || v === null || v === false || v === 0) return true
  return typeof v === 'string' && (v.trim() === '' || v.trim() === '0')
}

/**
 * The purchase time: unix seconds (or milliseconds), `YYYY-MM-DD HH:MM:SS` / `YYYY-MM-DD` in UTC, or ISO 8601.
 * Only days that exist (no 30 February rolled over into March) and no time before 1970.
 */
export function parseTimestamp(v: number | string | boolean | null | undefined, now: Date): Date | undefined {
  if (noTime(v)) return now
  if (typeof v === 'boolean' || v === null || v === undefined) return undefined
  let ms: number
  if (typeof v === 'number' || UNIX.test(v.trim())) {
    const n = Number(v)
    if (!Number.isFinite(n) || n < 0) return undefined
    ms = n >= MS_THRESHOLD ? n : n * 1000
  } else {
    const s = v.trim()
    const iso = ISO.exec(s)
    const d =
      parseSqlDateTime(s) ?? parseDay(s) ?? (iso && parseDay(iso[1]!) ? new Date(iso[4] ? s : `${s}Z`) : null)
    if (!d) return undefined
    ms = d.getTime()
  }
  // Before 1970: years 1 and 99 came back as 2001 and 1999, read back through JavaScript's two-digit years.
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_TIME) return undefined
  return new Date(Math.round(ms))
}

const text = (v: string | null | undefined) => (v ?? '').trim()

/**
 * Checks and normalises one purchase, reporting every bad field under `path` (`transaction.amount`,
 * `transaction_data.3.transaction_items.0.price`). Returns undefined when anything was wrong.
 */
export function toPurchase(
  errors: FieldErrorBag,
  path: string,
  t: Omit<TransactionInputT, 'order_id'> & { order_id: string },
  items: TransactionItemsInputT | null | undefined,
  now: Date,
): PurchaseValues | undefined {
  const before = Object.keys(errors.errors).length
  const at = (field: string) => (path ? `${path}.${field}` : field)
  const tp = at('transaction')
  const orderId = t.order_id.trim()
  if (orderId === '') errors.add(`${tp}.order_id`, 'The order id field is required.')
  const email = normalizeEmail(t.email)
  if (email === '') errors.add(`${tp}.email`, 'The email field is required.')
  else if (!isValidEmail(email)) errors.add(`${tp}.email`, 'The email must be a valid email address.')
  const money = (field: 'amount' | 'tax' | 'shipping') => {
    const d = decimal(t[field], '0')
    if (d === undefined) errors.add(`${tp}.${field}`, `The ${field} must be a number.`)
    return d ?? '0'
  }
  const amount = money('amount')
  const tax = money('tax')
  const shipping = money('shipping')
  const occurredAt = parseTimestamp(t.timestamp, now)
  if (!occurredAt)
    errors.add(
      `${tp}.timestamp`,
      'The timestamp must be unix seconds, YYYY-MM-DD HH:MM:SS (UTC) or an ISO 8601 date-time.',
    )
  const county = t.county === undefined || t.county === null ? null : t.county.trim() || null
  // An object is PHP's list with gaps in its keys (transactions.schemas.ts Items): its values, in key order.
  const list = items == null ? [] : Array.isArray(items) ? items : Object.values(items)
  const lines: ItemValues[] = list.map((item, i) => {
    const ip = `${at('transaction_items')}.${i}`
    const price = decimal(item.price, '0')
    if (price === undefined) errors.add(`${ip}.price`, 'The price must be a number.')
    const quantity = decimal(item.amount, '1')
    if (quantity === undefined) errors.add(`${ip}.amount`, 'The amount must be a number.')
    return {
      code: text(item.code),
      title: text(item.title),
      category: text(item.category),
      price: price ?? '0',
      amount: quantity ?? '1',
      categories: (item.categories ?? []).map((c) => c.trim()).filter((c) => c !== ''),
    }
  })
  if (Object.keys(errors.errors).length > before || !occurredAt) return undefined
  return {
    transaction: {
      orderId,
      email,
      shop: text(t.shop),
      amount,
      tax,
      shipping,
      city: text(t.city),
      county,
      country: text(t.country),
      status: text(t.status),
      props: t.props === undefined ? null : t.props,
      occurredAt,
      timeGiven: !noTime(t.timestamp),
    },
    items: lines,
  }
}

/** The shop a single-order delete names, if any (its body and `transaction_data` may be `[]`, PHP's empty map). */
export function deleteShopOf(body: DeleteOneBodyT): string | null | undefined {
  const data = body && !Array.isArray(body) ? body.transaction_data : undefined
  return data && !Array.isArray(data) ? data.shop : undefined
}
