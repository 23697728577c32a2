import { validationFailed, type FieldErrors } from '../../core/http/errors.js'
import { longerThan } from '../../core/http/text-length.js'

/**
 * The condition language of contract §6, shared by segments (a list's saved filter) and the automation engine
 * (check and goal nodes). `parseCondition` turns untrusted JSON into a typed, normalised Condition or field
 * errors named by their wire path (`filter.all.0.op`); `conditionSql` (condition.sql.ts) compiles one.
 */

export const FIELD_OPS = ['eq', 'neq', 'contains', 'gt', 'lt', 'exists'] as const
export type FieldOp = (typeof FIELD_OPS)[number]
export type ConditionValue = string | number | boolean

export interface FieldCondition {
  /** Trimmed and lower-cased: a contact column, or else a custom field key (stored lower-cased too). */
  field: string
  op: FieldOp
  /** Absent only for `exists`, where `false` asks for "does not exist". */
  value?: ConditionValue
}

export interface EventCondition {
  category: string
  action?: string
}

export type Condition =
  | { all: Condition[] }
  | { any: Condition[] }
  | { not: Condition }
  | FieldCondition
  | { tag: string }
  | { opened: string }
  | { clicked: string }
  | { purchased: { days: number } }
  | { event: EventCondition }
  | { in_list: number }

export type ParseResult = { ok: true; condition: Condition } | { ok: false; errors: FieldErrors }

/** Contact columns a `field` condition reads directly (src/modules/subscribers/subscribers.table.ts). */
export const CONTACT_FIELDS: ReadonlySet<string> = new Set([
  'email',
  'name',
  'surname',
  'gender',
  'company',
  'city',
  'street',
  'zip',
  'country',
  'phone',
  'pretitle',
  'surtitle',
  'birthday',
  'nameday',
  'vokativ',
  'vokativ_s',
])

/** Bounds that keep one condition cheap to parse, store and run. */
export const CONDITION_LIMITS = {
  depth: 10,
  nodes: 200,
  items: 100,
  fieldName: 100,
  text: 1000,
  tag: 50,
  nodeId: 255,
  days: 3650,
} as const

const KINDS = [
  'all',
  'any',
  'not',
  'field',
  'tag',
  'opened',
  'clicked',
  'purchased',
  'event',
  'in_list',
] as const
type Kind = (typeof KINDS)[number]

const MAX_INT = 2147483647

interface State {
  errors: FieldErrors
  nodes: number
  /** Set once the node budget is spent: parsing stops so a huge input costs no more work. */
  exhausted: boolean
}

function add(st: State, path: string, message: string): void {
  const list = (st.errors[path] ??= [])
  if (!list.includes(message)) list.push(message)
}

/** The name used in messages: the last path segment, with its parent when it is an array index (`all.0`). */
function label(path: string): string {
  const parts = path.split('.')
  const last = parts[parts.length - 1] ?? path
  if (/^\d+$/.test(last) && parts.length > 1) return `${parts[parts.length - 2]}.${last}`
  return last
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key)

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** An integer, also from a numeric string (PHP clients send "3"). */
function toInteger(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isInteger(v)) return v
  if (typeof v === 'string' && /^\s*-?\d{1,10}\s*$/.test(v)) return Number(v)
  return undefined
}

/** Only the keys of `allowed` may appear; anything else is most likely a typo and is reported. */
function rejectExtraKeys(st: State, obj: Record<string, unknown>, path: string, allowed: readonly string[]) {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) add(st, join(path, key), `The ${key} field is not allowed.`)
  }
}

function requiredText(st: State, v: unknown, path: string, max: number): string | undefined {
  const text = typeof v === 'number' && Number.isFinite(v) ? String(v) : v
  if (text === undefined || text === null || (typeof text === 'string' && text.trim() === '')) {
    add(st, path, `The ${label(path)} field is required.`)
    return undefined
  }
  if (typeof text !== 'string') {
    add(st, path, `The ${label(path)} must be a string.`)
    return undefined
  }
  const trimmed = text.trim()
  if (longerThan(trimmed, max)) {
    add(st, path, `The ${label(path)} must not be greater than ${max} characters.`)
    return undefined
  }
  return trimmed
}

function boundedInteger(st: State, v: unknown, path: string, min: number, max: number): number | undefined {
  if (v === undefined || v === null) {
    add(st, path, `The ${label(path)} field is required.`)
    return undefined
  }
  const n = toInteger(v)
  if (n === undefined) add(st, path, `The ${label(path)} must be an integer.`)
  else if (n < min) add(st, path, `The ${label(path)} must be at least ${min}.`)
  else if (n > max) add(st, path, `The ${label(path)} must not be greater than ${max}.`)
  else return n
  return undefined
}

function parseList(st: State, v: unknown, path: string, depth: number): Condition[] | undefined {
  if (!Array.isArray(v)) {
    add(st, path, `The ${label(path)} must be an array.`)
    return undefined
  }
  if (v.length === 0) {
    add(st, path, `The ${label(path)} must have at least 1 items.`)
    return undefined
  }
  if (v.length > CONDITION_LIMITS.items) {
    add(st, path, `The ${label(path)} must not have more than ${CONDITION_LIMITS.items} items.`)
    return undefined
  }
  const out: Condition[] = []
  v.forEach((item, i) => {
    const c = parseNode(st, item, join(path, String(i)), depth + 1)
    if (c) out.push(c)
  })
  return out.length === v.length ? out : undefined
}

function parseValue(st: State, obj: Record<string, unknown>, op: FieldOp, path: string, field: string) {
  const at = join(path, 'value')
  const v = obj.value
  if (op === 'exists') {
    if (v === undefined || v === null) return { ok: true as const, value: undefined }
    if (typeof v !== 'boolean') {
      add(st, at, 'The value must be of type boolean.')
      return { ok: false as const }
    }
    return { ok: true as const, value: v }
  }
  if (v === undefined || v === null || (op === 'contains' && v === '')) {
    add(st, at, 'The value field is required.')
    return { ok: false as const }
  }
  const ordered = op === 'contains' || op === 'gt' || op === 'lt'
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) add(st, at, 'The value must be a number.')
    else return { ok: true as const, value: v }
    return { ok: false as const }
  }
  if (typeof v === 'boolean' && !ordered) return { ok: true as const, value: v }
  if (typeof v !== 'string') {
    add(
      st,
      at,
      ordered ? 'The value must be a string or number.' : 'The value must be a string, number or boolean.',
    )
    return { ok: false as const }
  }
  if (longerThan(v, CONDITION_LIMITS.text)) {
    add(st, at, `The value must not be greater than ${CONDITION_LIMITS.text} characters.`)
    return { ok: false as const }
  }
  // Addresses are stored lower-cased, so an address is compared the same way.
  return { ok: true as const, value: field === 'email' ? v.trim().toLowerCase() : v }
}

function parseField(st: State, obj: Record<string, unknown>, path: string): FieldCondition | undefined {
  rejectExtraKeys(st, obj, path, ['field', 'op', 'value'])
  const rawField = requiredText(st, obj.field, join(path, 'field'), CONDITION_LIMITS.fieldName)
  const field = rawField?.toLowerCase()
  const opPath = join(path, 'op')
  let op: FieldOp | undefined
  if (obj.op === undefined || obj.op === null) add(st, opPath, 'The op field is required.')
  else if (typeof obj.op === 'string' && (FIELD_OPS as readonly string[]).includes(obj.op))
    op = obj.op as FieldOp
  else add(st, opPath, 'The selected op is invalid.')
  if (!op) return undefined
  const value = parseValue(st, obj, op, path, field ?? '')
  if (field === undefined || !value.ok) return undefined
  return value.value === undefined ? { field, op } : { field, op, value: value.value }
}

function parseEvent(st: State, v: unknown, path: string): EventCondition | undefined {
  if (!isObject(v)) {
    add(st, path, 'The event must be an object with a category.')
    return undefined
  }
  rejectExtraKeys(st, v, path, ['category', 'action'])
  const category = requiredText(st, v.category, join(path, 'category'), 255)
  let action: string | undefined
  if (v.action !== undefined && v.action !== null && v.action !== '') {
    action = requiredText(st, v.action, join(path, 'action'), 255)
    if (action === undefined) return undefined
  }
  if (category === undefined) return undefined
  return action === undefined ? { category } : { category, action }
}

function parseKind(
  st: State,
  kind: Kind,
  obj: Record<string, unknown>,
  path: string,
  depth: number,
): Condition | undefined {
  const at = join(path, kind)
  const v = obj[kind]
  if (kind !== 'field') rejectExtraKeys(st, obj, path, [kind])
  switch (kind) {
    case 'all':
    case 'any': {
      const items = parseList(st, v, at, depth)
      if (!items) return undefined
      return kind === 'all' ? { all: items } : { any: items }
    }
    case 'not': {
      const inner = parseNode(st, v, at, depth + 1)
      return inner && { not: inner }
    }
    case 'field':
      return parseField(st, obj, path)
    case 'tag': {
      const tag = requiredText(st, v, at, CONDITION_LIMITS.tag)
      return tag === undefined ? undefined : { tag }
    }
    case 'opened':
    case 'clicked': {
      const id = requiredText(st, v, at, CONDITION_LIMITS.nodeId)
      if (id === undefined) return undefined
      return kind === 'opened' ? { opened: id } : { clicked: id }
    }
    case 'purchased': {
      if (!isObject(v)) {
        add(st, at, 'The purchased must be an object with days.')
        return undefined
      }
      rejectExtraKeys(st, v, at, ['days'])
      const days = boundedInteger(st, v.days, join(at, 'days'), 1, CONDITION_LIMITS.days)
      return days === undefined ? undefined : { purchased: { days } }
    }
    case 'event': {
      const event = parseEvent(st, v, at)
      return event && { event }
    }
    case 'in_list': {
      const id = boundedInteger(st, v, at, 1, MAX_INT)
      return id === undefined ? undefined : { in_list: id }
    }
  }
}

function parseNode(st: State, input: unknown, path: string, depth: number): Condition | undefined {
  if (st.exhausted) return undefined
  if (++st.nodes > CONDITION_LIMITS.nodes) {
    st.exhausted = true
    add(st, path, `The filter must not have more than ${CONDITION_LIMITS.nodes} conditions.`)
    return undefined
  }
  if (depth > CONDITION_LIMITS.depth) {
    add(st, path, `The filter must not nest conditions more than ${CONDITION_LIMITS.depth} levels deep.`)
    return undefined
  }
  if (input === undefined || input === null) {
    add(st, path, `The ${label(path)} field is required.`)
    return undefined
  }
  if (!isObject(input)) {
    add(st, path, `The ${label(path)} must be a condition object.`)
    return undefined
  }
  const kinds = KINDS.filter((k) => k in input)
  const kind = kinds[0]
  if (kind === undefined || kinds.length > 1) {
    add(st, path, `The ${label(path)} must have exactly one of: ${KINDS.join(', ')}.`)
    return undefined
  }
  return parseKind(st, kind, input, path, depth)
}

/**
 * Validates and normalises a condition (field names and text trimmed, field names and addresses lower-cased,
 * numeric strings of ids and days made numbers). `path` names the input in error keys, e.g. `filter` or
 * `actions.3.properties.condition`. Every bad part is reported, up to the node budget.
 */
export function parseCondition(input: unknown, path: string): ParseResult {
  const st: State = { errors: {}, nodes: 0, exhausted: false }
  const condition = parseNode(st, input, path, 1)
  if (condition && Object.keys(st.errors).length === 0) return { ok: true, condition }
  return { ok: false, errors: st.errors }
}

/** As parseCondition, but throws the contract's 422 `{errors:{path:[...]}}` when the input is invalid. */
export function requireCondition(input: unknown, path: string): Condition {
  const r = parseCondition(input, path)
  if (!r.ok) throw validationFailed(r.errors)
  return r.condition
}

/** Visits every node with its wire path, parents before children. */
export function walkCondition(
  cond: Condition,
  path: string,
  visit: (c: Condition, path: string) => void,
): void {
  visit(cond, path)
  if ('all' in cond) cond.all.forEach((c, i) => walkCondition(c, `${path}.all.${i}`, visit))
  else if ('any' in cond) cond.any.forEach((c, i) => walkCondition(c, `${path}.any.${i}`, visit))
  else if ('not' in cond) walkCondition(cond.not, `${path}.not`, visit)
}
