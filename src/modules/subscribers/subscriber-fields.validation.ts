import { countryCode } from '../../core/http/country-names.js'
import { FieldErrorBag } from '../../core/http/errors.js'
import { isValidEmail, normalizeEmail } from '../../core/http/email.js'
import { parseJsonText } from '../../core/http/json-text.js'
import { flagOn, type FlagT } from '../../core/http/schemas.js'
import { STATUS_FILTERS } from './subscribers.schemas.js'
import { longerThan } from '../../core/http/text-length.js'

/**
 * Field rules shared by every subscriber write (subscribe, subscribe-bulk, update-subscriber,
 * update-subscribers-bulk). The bulk endpoints take their entries unchecked from the route (entries past the
 * 3000 cap must not fail a request, and the bulk update answers 400 rather than 422), so these checks are
 * complete on their own and report every bad field of every entry with its wire path.
 */

/** Contact columns that hold plain text, with the longest value each accepts (mirrors SubscriberData). */
export const TEXT_FIELDS = {
  name: 255,
  surname: 255,
  gender: 20,
  company: 255,
  city: 255,
  street: 255,
  zip: 20,
  // A two-letter code or a country's name, stored as the code (checkCountry).
  country: 100,
  phone: 50,
  pretitle: 50,
  surtitle: 50,
  // Read as a date and stored as YYYY-MM-DD (checkDateField); a date-time column's text is longer.
  birthday: 32,
  nameday: 32,
  vokativ: 255,
  vokativ_s: 255,
} as const
export type TextField = keyof typeof TEXT_FIELDS

export const CUSTOM_FIELDS_MAX_CHARS = 5000
export const TAG_MAX_CHARS = 50
export const TAGS_MAX_TOTAL_CHARS = 2000
const SOURCE_MAX_CHARS = 255
const CUSTOM_FIELD_TYPES = new Set(['string', 'int', 'float', 'date', 'url', 'json'])

/** Contact fields an entry gives; an absent key (or null) leaves the stored value alone. */
export type ContactFields = Partial<Record<TextField, string>> & {
  rating?: number
  tags?: string[]
  groups?: Record<string, string[]>
  customFields?: Record<string, unknown>
}

export interface ParsedEntry {
  /** Normalised (trimmed, lower-cased); undefined when absent and not required. */
  email: string | undefined
  fields: ContactFields
  status: number | undefined
  /** Membership source; undefined when not given. */
  source: string | undefined
}

export interface EntryRules {
  /** Membership statuses this endpoint accepts as input. */
  statuses: readonly number[]
  emailRequired: boolean
}

/** The field's own name in messages, as the core error handler words them; a bare index keeps its path. */
function label(path: string): string {
  const last = path.split('.').pop() ?? path
  return /^\d+$/.test(last) ? path : last
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The address, normalised; records an error at `path` and returns undefined when missing or invalid. */
export function checkEmail(
  value: unknown,
  path: string,
  bag: FieldErrorBag,
  required = true,
): string | undefined {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    if (required) bag.add(path, `The ${label(path)} field is required.`)
    return undefined
  }
  if (typeof value !== 'string') {
    bag.add(path, `The ${label(path)} must be a string.`)
    return undefined
  }
  const email = normalizeEmail(value)
  if (!isValidEmail(email)) {
    bag.add(path, `The ${label(path)} must be a valid email address.`)
    return undefined
  }
  return email
}

/** Text as Ajv's type coercion would take it: strings, and numbers (zip or phone sent as a number). */
function checkText(value: unknown, path: string, max: number, bag: FieldErrorBag): string | undefined {
  if (value === undefined || value === null) return undefined
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value
  if (typeof text !== 'string') {
    bag.add(path, `The ${label(path)} must be a string.`)
    return undefined
  }
  const trimmed = text.trim()
  if (longerThan(trimmed, max)) {
    bag.add(path, `The ${label(path)} must not be greater than ${max} characters.`)
    return undefined
  }
  return trimmed
}

/** Whether year-month-day names a day of the Gregorian calendar (2026-02-30 and month 13 do not). */
function isRealDay(year: number, month: number, day: number): boolean {
  const d = new Date(Date.UTC(year, month - 1, day))
  // Date.UTC maps years 0-99 to 1900-1999; setting the full year keeps 0001-0099 what they say.
  d.setUTCFullYear(year)
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day
}

/** Date fields and the forms they accept: birthday a full date; nameday a day of the year or a full date. */
const DATE_FIELDS = {
  birthday: { yearless: false, format: 'YYYY-MM-DD' },
  nameday: { yearless: true, format: 'MM-DD or YYYY-MM-DD' },
} as const

/** A date as shops hold one, with the time of a date-time column after it (ignored: a birthday is a day). */
const ISO_DAY =
  /^(\d{4})-(\d{2})-(\d{2})(?:[ T](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i
/**
 * Day first with dots or dashes, as PHP's strtotime() reads them and European locales write a short date
 * ("15.01.1990", "15. 1. 1990", "15-1-1990").
 */
const DOTTED_DAY = /^(\d{1,2})(?:\.\s?|-)(\d{1,2})(?:\.\s?|-)(\d{4})$/
/** Month first with slashes, as PHP's strtotime() reads them and US (and .NET's invariant) short dates are. */
const SLASHED_DAY = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/
/** MySQL's zero date: what shops on MySQL hold for a date never given. */
const ZERO_DAY = /^0000-00-00(?:[ T]00:00(?::00)?)?$/

/** Year, month and day as written, in whichever of the forms above the text is. */
function dayParts(value: string): [string, string, string] | undefined {
  let r = ISO_DAY.exec(value)
  if (r) return [r[1]!, r[2]!, r[3]!]
  r = DOTTED_DAY.exec(value)
  if (r) return [r[3]!, r[2]!, r[1]!]
  r = SLASHED_DAY.exec(value)
  if (r) return [r[3]!, r[1]!, r[2]!]
  return undefined
}

/**
 * A full date as `YYYY-MM-DD`, from the forms shop clients send (.NET's culture short date, a date-time column,
 * MySQL's zero date for none: ''), or undefined when the text names no real day.
 */
function fullDate(value: string): string | undefined {
  if (ZERO_DAY.test(value)) return ''
  const parts = dayParts(value)
  if (!parts) return undefined
  const [y, m, d] = parts
  return isRealDay(Number(y), Number(m), Number(d))
    ? `${y}-${m.padStart(2, '0')}-${d.padStart(2, '0')}`
    : undefined
}

/**
 * A birthday or nameday already read as text: an empty string clears the field (as for every text field),
 * anything else must be a real calendar day, stored as `YYYY-MM-DD` (see fullDate for the forms read). A
 * year-less nameday is checked against a leap year, so 02-29 (a nameday in the calendar) is allowed.
 */
function checkDateField(
  value: string,
  field: keyof typeof DATE_FIELDS,
  path: string,
  bag: FieldErrorBag,
): string | undefined {
  if (value === '') return value
  const rule = DATE_FIELDS[field]
  const yearless = rule.yearless ? /^(\d{2})-(\d{2})$/.exec(value) : null
  if (yearless && isRealDay(2000, Number(yearless[1]), Number(yearless[2]))) return value
  const full = yearless ? undefined : fullDate(value)
  if (full !== undefined) return full
  bag.add(path, `The ${label(path)} must be a real date in the format ${rule.format}.`)
  return undefined
}

/**
 * A country stored as its two-letter code: given as one (upper-cased), or as a country's name in a shop's
 * language, which shop hooks send ("Česká republika"); the name of no country is an error.
 */
function checkCountry(value: string, path: string, bag: FieldErrorBag): string | undefined {
  const code = countryCode(value)
  if (code === undefined) bag.add(path, `The ${label(path)} must be a two-letter code or a country name.`)
  return code
}

/** An integer, also from a numeric string (form posts and PHP clients send "1"). */
function toInteger(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return value
  if (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value)) return Number(value)
  return undefined
}

/** A status by the name the list page's `status` filter gives it ("subscribed"), as some clients send it. */
function statusByName(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined
  const name = value.trim().toLowerCase()
  return Object.hasOwn(STATUS_FILTERS, name) ? STATUS_FILTERS[name as keyof typeof STATUS_FILTERS] : undefined
}

/** A status number, also as a numeric string or by its list-page name; it must be one of `allowed`. */
export function checkStatus(
  value: unknown,
  path: string,
  allowed: readonly number[],
  bag: FieldErrorBag,
): number | undefined {
  if (value === undefined || value === null) return undefined
  const status = toInteger(value) ?? statusByName(value)
  if (status === undefined || !allowed.includes(status)) {
    bag.add(path, `The selected ${label(path)} is invalid.`)
    return undefined
  }
  return status
}

/**
 * Tags trimmed, empty ones dropped, repeats removed (first position kept); each ≤ 50, ≤ 2000 in total. A map is
 * read as the list of its values: PHP encodes a list with gaps in its keys (`array_unique`) as `{"0":"a","2":"b"}`.
 * A list of nothing but blanks (`[""]`, an empty form select) is no tags given, not an empty list: tags given
 * replace a contact's, and `[]` clears them.
 */
export function checkTags(given: unknown, path: string, bag: FieldErrorBag): string[] | undefined {
  if (given === undefined || given === null) return undefined
  const value = isPlainObject(given) ? Object.values(given) : given
  if (!Array.isArray(value)) {
    bag.add(path, `The ${label(path)} must be an array.`)
    return undefined
  }
  if (value.some((t) => typeof t !== 'string')) {
    bag.add(path, `Each of the ${label(path)} must be a string.`)
    return undefined
  }
  const tags = [...new Set((value as string[]).map((t) => t.trim()).filter((t) => t !== ''))]
  if (tags.length === 0 && value.length > 0) return undefined
  let ok = true
  if (tags.some((t) => longerThan(t, TAG_MAX_CHARS))) {
    bag.add(path, `Each of the ${label(path)} must not be greater than ${TAG_MAX_CHARS} characters.`)
    ok = false
  }
  if (longerThan(tags.join(''), TAGS_MAX_TOTAL_CHARS)) {
    bag.add(path, `The ${label(path)} must not be greater than ${TAGS_MAX_TOTAL_CHARS} characters in total.`)
    ok = false
  }
  return ok ? tags : undefined
}

function isCustomFieldValue(v: unknown): boolean {
  if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) return true
  if (!isPlainObject(v) || !('value' in v)) return false
  return v.type === undefined || (typeof v.type === 'string' && CUSTOM_FIELD_TYPES.has(v.type))
}

/**
 * Custom fields given as JSON text, as tag-manager clients send what was typed into a text setting: the object
 * it spells, read as a request body is (parseJsonText), and with no U+0000; blank text is none given. Anything
 * else comes back as it was, for the object check to refuse.
 */
function customFieldsFromText(text: string): unknown {
  if (text.trim() === '') return undefined
  // JSON can only spell U+0000 as an escape, which text and jsonb cannot hold.
  if (/\\u0000/i.test(text)) return text
  const read = parseJsonText(text)
  return 'value' in read && typeof read.value === 'object' && read.value !== null ? read.value : text
}

/**
 * An object of custom fields with keys trimmed and lower-cased. Two keys equal after that are rejected (one
 * would silently overwrite the other); the size is the JSON of the normalised object. An empty JSON array is
 * taken as an empty object: PHP clients encode an empty associative array as `[]`. JSON text holding an
 * object is read as that object.
 */
export function checkCustomFields(
  given: unknown,
  path: string,
  bag: FieldErrorBag,
): Record<string, unknown> | undefined {
  const value = typeof given === 'string' ? customFieldsFromText(given) : given
  if (value === undefined || value === null) return undefined
  if (Array.isArray(value) && value.length === 0) return {}
  if (!isPlainObject(value)) {
    bag.add(path, `The ${label(path)} must be an object.`)
    return undefined
  }
  const out: Record<string, unknown> = {}
  const errors: string[] = []
  for (const [rawKey, v] of Object.entries(value)) {
    const key = rawKey.trim().toLowerCase()
    if (key === '') errors.push(`The ${label(path)} keys must not be empty.`)
    else if (Object.hasOwn(out, key))
      errors.push(`The ${label(path)} contain the key "${key}" more than once (keys ignore case).`)
    else if (!isCustomFieldValue(v))
      errors.push(`The ${label(path)} value of "${key}" must be a scalar or an object with value and type.`)
    else out[key] = v
  }
  if (errors.length === 0 && longerThan(JSON.stringify(out), CUSTOM_FIELDS_MAX_CHARS))
    errors.push(`The ${label(path)} must not be greater than ${CUSTOM_FIELDS_MAX_CHARS} characters.`)
  for (const e of errors) bag.add(path, e)
  return errors.length === 0 ? out : undefined
}

/** Groups: `{group key: [strings]}`; an empty JSON array is an empty object, as for custom fields (PHP). */
function checkGroups(value: unknown, path: string, bag: FieldErrorBag): Record<string, string[]> | undefined {
  if (value === undefined || value === null) return undefined
  if (Array.isArray(value) && value.length === 0) return {}
  const valid =
    isPlainObject(value) &&
    Object.values(value).every((g) => Array.isArray(g) && g.every((s) => typeof s === 'string'))
  if (!valid) {
    bag.add(path, `The ${label(path)} must map each group to an array of strings.`)
    return undefined
  }
  return value as Record<string, string[]>
}

function checkRating(value: unknown, path: string, bag: FieldErrorBag): number | undefined {
  if (value === undefined || value === null) return undefined
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value
  if (typeof n !== 'number' || !Number.isFinite(n)) {
    bag.add(path, `The ${label(path)} must be a number.`)
    return undefined
  }
  // The column is a 4-byte float (`real`): PostgreSQL refuses what it cannot hold, beyond about 3.4e38 or so
  // near zero that it would round to 0 (about 1e-46), and that refusal was a 500. Round bounds well inside.
  if (n !== 0 && (Math.abs(n) > RATING_MAX || Math.abs(n) < RATING_MIN)) {
    bag.add(path, `The ${label(path)} must be 0 or a number of magnitude between 1e-37 and 1e37.`)
    return undefined
  }
  return n
}

const RATING_MAX = 1e37
const RATING_MIN = 1e-37

/**
 * One of the subscriber's text fields as stored: trimmed within its length, a date field as its day
 * (checkDateField), a country as its code (checkCountry); undefined when absent or refused (into `bag`).
 */
function checkTextField(
  field: TextField,
  value: unknown,
  path: string,
  bag: FieldErrorBag,
): string | undefined {
  const v = checkText(value, path, TEXT_FIELDS[field], bag)
  if (v === undefined) return undefined
  if (field === 'birthday' || field === 'nameday') return checkDateField(v, field, path, bag)
  if (field === 'country') return checkCountry(v, path, bag)
  return v
}

/**
 * One `subscriber_data` object at `path` (e.g. `subscriber_data` or `subscriber_data.3`). Every problem goes
 * into `bag` under `<path>.<field>`; an entry with any problem comes back undefined.
 */
export function parseEntry(
  raw: unknown,
  path: string,
  rules: EntryRules & { emailRequired: true },
  bag: FieldErrorBag,
): (ParsedEntry & { email: string }) | undefined
export function parseEntry(
  raw: unknown,
  path: string,
  rules: EntryRules,
  bag: FieldErrorBag,
): ParsedEntry | undefined
export function parseEntry(
  raw: unknown,
  path: string,
  rules: EntryRules,
  bag: FieldErrorBag,
): ParsedEntry | undefined {
  if (!isPlainObject(raw)) {
    bag.add(path, `The ${label(path)} must be an object.`)
    return undefined
  }
  const own = new FieldErrorBag()
  const at = (field: string) => `${path}.${field}`
  const fields: ContactFields = {}
  for (const field of Object.keys(TEXT_FIELDS) as TextField[]) {
    const v = checkTextField(field, raw[field], at(field), own)
    if (v !== undefined) fields[field] = v
  }
  const rating = checkRating(raw.rating, at('rating'), own)
  if (rating !== undefined) fields.rating = rating
  const tags = checkTags(raw.tags, at('tags'), own)
  if (tags !== undefined) fields.tags = tags
  const groups = checkGroups(raw.groups, at('groups'), own)
  if (groups !== undefined) fields.groups = groups
  const customFields = checkCustomFields(raw.custom_fields, at('custom_fields'), own)
  if (customFields !== undefined) fields.customFields = customFields
  const entry: ParsedEntry = {
    email: checkEmail(raw.email, at('email'), own, rules.emailRequired),
    fields,
    status: checkStatus(raw.status, at('status'), rules.statuses, own),
    source: checkText(raw.source, at('source'), SOURCE_MAX_CHARS, own),
  }
  for (const [field, messages] of Object.entries(own.errors)) for (const m of messages) bag.add(field, m)
  return own.empty ? entry : undefined
}

/** A flag the schema let through (subscribers.write.schemas.ts `flag`): `fallback` when absent. */
export const flagValue = (v: FlagT | undefined, fallback: boolean): boolean =>
  v === undefined ? fallback : flagOn(v)

/** A boolean flag as Ajv's coercion reads one: true/false, "true"/"false", 1/0, "1"/"0"; null is false. */
export function checkFlag(value: unknown, path: string, fallback: boolean, bag: FieldErrorBag): boolean {
  if (value === undefined) return fallback
  if (value === null) return false
  if (typeof value === 'boolean') return value
  if (value === 1 || value === '1' || value === 'true') return true
  if (value === 0 || value === '0' || value === 'false') return false
  bag.add(path, `The ${label(path)} field must be true or false.`)
  return fallback
}

/**
 * The first `limit` entries of a bulk `subscriber_data` with the index each error path names (the rest are
 * silently ignored, api.md Limits), or undefined with an error when it is missing or not a list. An object
 * is read as a list keyed by its own keys: PHP encodes a filtered array (keys with gaps) that way.
 */
export function bulkItems(
  value: unknown,
  limit: number,
  bag: FieldErrorBag,
): { key: string; raw: unknown }[] | undefined {
  if (value === undefined || value === null) {
    bag.add('subscriber_data', 'The subscriber_data field is required.')
    return undefined
  }
  if (Array.isArray(value)) return value.slice(0, limit).map((raw, i) => ({ key: String(i), raw }))
  if (isPlainObject(value))
    return Object.entries(value)
      .slice(0, limit)
      .map(([key, raw]) => ({ key, raw }))
  bag.add('subscriber_data', 'The subscriber_data must be an array.')
  return undefined
}

type Mergeable = Pick<ParsedEntry, 'fields' | 'status' | 'source'> & { email: string }

/**
 * One entry per address, at its last occurrence: repeated entries merged in order, as if applied one after
 * another. A field, status or source given later wins; custom fields and groups merge key by key; the last list
 * of tags given stands, as each write replaces a contact's tags. Keeping only the last entry dropped what earlier
 * ones said: an unsubscribe (`status: 2`) followed by a name came out subscribed.
 */
export function mergePerEmail<T extends Mergeable>(entries: T[]): T[] {
  const byEmail = new Map<string, T>()
  for (const e of entries) {
    const before = byEmail.get(e.email)
    byEmail.delete(e.email)
    byEmail.set(e.email, before ? mergeEntries(before, e) : e)
  }
  return [...byEmail.values()]
}

function mergeEntries<T extends Mergeable>(a: T, b: T): T {
  const fields: ContactFields = { ...a.fields }
  for (const [k, v] of Object.entries(b.fields)) if (v !== undefined) Object.assign(fields, { [k]: v })
  if (a.fields.customFields && b.fields.customFields)
    fields.customFields = { ...a.fields.customFields, ...b.fields.customFields }
  if (a.fields.groups && b.fields.groups) fields.groups = { ...a.fields.groups, ...b.fields.groups }
  return { ...b, fields, status: b.status ?? a.status, source: b.source ?? a.source }
}

/**
 * The entries by address (code-unit order), the order in which a bulk statement should lock their contacts:
 * two concurrent imports of overlapping addresses that each lock them in their own input order wait for each
 * other in a cycle, and PostgreSQL aborts one (a deadlock; with 24 clients importing 50-200 overlapping rows,
 * a few an hour outlasted four tries and were 500s). In one order, the later import waits for the earlier.
 */
export function inLockOrder<T extends { email: string }>(entries: readonly T[]): T[] {
  return [...entries].sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0))
}

/** The parsed value once the bag is empty; otherwise throws every collected error (422, or 400 for bulk update). */
export function validOrThrow<T>(bag: FieldErrorBag, value: T | undefined, status = 422): T {
  bag.throwIfAny(status)
  // A parser returns undefined only after recording why, so this is a programming error, not bad input.
  if (value === undefined) throw new Error('validation produced neither a value nor an error')
  return value
}

/** Fields of the person an automation's edit node may not set, and why (other nodes set some of them). */
const NOT_EDITABLE = new Map([
  ['email', 'The email cannot be changed by an edit node.'],
  ['status', 'The status cannot be set by an edit node: use a subscribe or unsubscribe node.'],
  ['tags', 'The tags cannot be set by an edit node: use a tag or untag node.'],
  ['groups', 'The groups cannot be set by an edit node.'],
  ['rating', 'The rating cannot be set by an edit node.'],
  ['source', 'The source cannot be set by an edit node.'],
])

/**
 * An automation edit node's `fields` (contract §6), checked as subscribe checks the same values, so a run
 * writes nothing the API would refuse: the subscriber's text fields trimmed, within their lengths, a country's
 * name as its code and dates as YYYY-MM-DD, null clearing one. Any other key is a custom field, and so is every
 * key under `custom_fields` (kept there, so a custom field may share a column's name); both are checked as
 * subscribe's custom_fields are (keys trimmed and lower-cased, a scalar or `{value, type}` or null, 5000
 * characters each). A null for a field the node cannot set is ignored, as subscribe ignores it (form editors send
 * untouched fields so). Errors are reported at `path.<key as sent>`; undefined when there are any.
 */
export function parseEditFields(
  raw: Record<string, unknown>,
  path: string,
  bag: FieldErrorBag,
): Record<string, unknown> | undefined {
  const own = new FieldErrorBag()
  const out: Record<string, unknown> = {}
  const custom: Record<string, unknown> = {}
  for (const [rawKey, value] of Object.entries(raw)) {
    if (rawKey === 'custom_fields') continue
    const key = rawKey.trim().toLowerCase()
    const at = `${path}.${rawKey}`
    const refused = NOT_EDITABLE.get(key)
    if (refused) {
      if (value !== null) own.add(at, refused)
    } else if (!Object.hasOwn(TEXT_FIELDS, key)) custom[rawKey] = value
    else if (Object.hasOwn(out, key))
      own.add(at, `The field "${key}" is given more than once (names ignore case).`)
    else if (value === null) out[key] = null
    else {
      const v = checkTextField(key as TextField, value, at, own)
      if (v !== undefined) out[key] = v
    }
  }
  Object.assign(out, checkCustomFields(custom, path, own))
  const nested = checkCustomFields(raw.custom_fields, `${path}.custom_fields`, own)
  if (nested && Object.keys(nested).length) out.custom_fields = nested
  if (own.empty && Object.keys(out).length === 0)
    own.add(path, 'The fields must name at least one field to change.')
  for (const [field, messages] of Object.entries(own.errors)) for (const m of messages) bag.add(field, m)
  return own.empty ? out : undefined
}
