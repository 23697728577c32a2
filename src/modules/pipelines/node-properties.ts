import { DAY_MS } from '../../core/clock.js'
import type { FieldErrorBag } from '../../core/http/errors.js'
import { isValidEmail } from '../../core/http/email.js'
import { parseOutboundUrl, privateTargetError } from '../../core/net/outbound-url.js'
import { parseCondition, walkCondition } from '../segments/index.js'
import { parseEditFields } from '../subscribers/index.js'
import type { Condition, Duration, NodeType, PipelineNode, TimeUnit } from './pipeline-graph.js'
import {
  isObject,
  join,
  oneOf,
  optionalText,
  positiveNumber,
  requiredInteger,
  requiredText,
} from './validate-helpers.js'

/** A reference to a record of the account, checked against the database once the whole graph is read. */
export interface RefUse {
  id: number
  path: string
}

/** What the properties of every node refer to, for the checks that need the whole graph or the database. */
export interface NodeRefs {
  templates: RefUse[]
  lists: RefUse[]
  pipelines: RefUse[]
  /** `opened`/`clicked` in conditions: must name a mail node of the same graph. */
  mailNodes: { id: string; path: string }[]
}

export const emptyRefs = (): NodeRefs => ({ templates: [], lists: [], pipelines: [], mailNodes: [] })

export const TIME_UNITS: readonly TimeUnit[] = ['seconds', 'minutes', 'hours', 'days']
const MAX_SPLIT_VARIANTS = 20
const MAX_SMS = 1600
/** The methods a webhook node may name; the engine sends with the one it names. */
export const WEBHOOK_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

type Props = Record<string, unknown>

/** Milliseconds in one of each unit: what a wait's due time and the bounds below are reckoned in. */
const UNIT_MS: Record<TimeUnit, number> = {
  seconds: 1000,
  minutes: 60_000,
  hours: 3_600_000,
  days: DAY_MS,
}

/** A wait's (or a goal timeout's) length in milliseconds; 0 for anything that is not one. */
export function durationMs(d: unknown): number {
  const { value, unit } = (d ?? {}) as Partial<Duration>
  const ms = UNIT_MS[unit as TimeUnit] ?? 0
  return Math.max(0, Number(value) || 0) * ms
}

/** Longest wait: ten years. Longer ones are mistakes, and due times stay far inside the date range. */
const MAX_DURATION_MS = 3650 * UNIT_MS.days

/**
 * `{value, unit}` read from `v` (a wait node's properties or a goal's timeout); errors under `path`. At least
 * one second: the cycle check counts these as waits, and a wait of `0.0001` seconds (due at once, times are kept
 * to the millisecond) let a cycle spin, a log entry a turn.
 */
function duration(bag: FieldErrorBag, v: Props, path: string) {
  const unit = oneOf(bag, v.unit, join(path, 'unit'), TIME_UNITS)
  const value = positiveNumber(
    bag,
    v.value,
    join(path, 'value'),
    MAX_DURATION_MS / UNIT_MS[unit ?? 'seconds'],
  )
  if (value === undefined || unit === undefined) return undefined
  if (durationMs({ value, unit }) < 1000) {
    bag.add(join(path, 'value'), 'The value must be at least 1 second.')
    return undefined
  }
  return { value, unit }
}

function condition(bag: FieldErrorBag, refs: NodeRefs, v: unknown, path: string): Condition | undefined {
  const r = parseCondition(v, path)
  if (!r.ok) {
    for (const [p, msgs] of Object.entries(r.errors)) for (const m of msgs) bag.add(p, m)
    return undefined
  }
  walkCondition(r.condition, path, (c, at) => {
    if ('opened' in c) refs.mailNodes.push({ id: c.opened, path: `${at}.opened` })
    if ('clicked' in c) refs.mailNodes.push({ id: c.clicked, path: `${at}.clicked` })
  })
  return r.condition
}

/** The Standard Webhooks headers the engine writes when it signs a call (webhooks' deliveryHeaders). */
const SIGNATURE_HEADERS = new Set(['webhook-id', 'webhook-timestamp', 'webhook-signature'])

/**
 * Webhook headers: an object of string values (names and values bounded). The signature's names are refused:
 * the engine writes them (a stored node's were kept as saved, and are left out when the call is signed).
 */
function headers(
  bag: FieldErrorBag,
  v: unknown,
  path: string,
  stored: boolean,
): Record<string, string> | undefined {
  if (v === undefined || v === null) return undefined
  if (!isObject(v)) {
    bag.add(path, 'The headers must be an object.')
    return undefined
  }
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(v)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/.test(name))
      bag.add(join(path, name), 'The header name is invalid.')
    else if (!stored && SIGNATURE_HEADERS.has(name.toLowerCase()))
      bag.add(join(path, name), `The ${name} header is the signature's, which Tidings writes.`)
    else if (typeof value !== 'string' || value.length > 1000 || /[\r\n]/.test(value))
      bag.add(join(path, name), 'The header value must be a string of one line.')
    else out[name] = value
  }
  return out
}

/**
 * `stored`: the node is a stored one, brought back by a PUT of other fields. `allowPrivateNetwork` false: a
 * webhook node's URL may not name a private, loopback or link-local address (ALLOW_PRIVATE_NETWORK unset).
 */
export interface ParseOptions {
  stored?: boolean
  /** The pipeline's stored nodes by id (an update): a node given with the same type and properties is `stored`. */
  storedNodes?: ReadonlyMap<string, Pick<PipelineNode, 'type' | 'properties'>>
  allowPrivateNetwork?: boolean
}

/**
 * The properties of one node as contract §6 lists them per type, normalised (trimmed text, numbers from
 * numeric strings). Unknown extra keys are kept: editors store their own layout data there. `path` is the
 * node's `properties` path. Returns undefined when something is wrong (reported in `bag`).
 */
export function parseProperties(
  bag: FieldErrorBag,
  refs: NodeRefs,
  type: NodeType,
  input: unknown,
  path: string,
  opts: ParseOptions = {},
): PipelineNode['properties'] | undefined {
  // `[]` is how PHP encodes an empty map.
  if (input === undefined || input === null || (Array.isArray(input) && input.length === 0)) input = {}
  if (!isObject(input)) {
    bag.add(path, 'The properties must be an object.')
    return undefined
  }
  const before = Object.keys(bag.errors).length
  const p: Props = { ...input }
  // Every node has a name (api.md); an unnamed node is called by its type.
  const name = optionalText(bag, input.name, join(path, 'name'), 255)?.trim()
  p.name = name || type
  const at = (key: string) => join(path, key)
  switch (type) {
    case 'mail': {
      const template = requiredInteger(bag, input.template, at('template'))
      if (template !== undefined) {
        p.template = template
        refs.templates.push({ id: template, path: at('template') })
      }
      for (const key of ['subject', 'from_name'] as const) optionalText(bag, input[key], at(key), 998)
      const from = optionalText(bag, input.from_email, at('from_email'), 254)
      if (from !== undefined && from !== '' && !isValidEmail(from))
        bag.add(at('from_email'), 'The from_email must be a valid email address.')
      break
    }
    case 'sms':
      p.text = requiredText(bag, input.text, at('text'), MAX_SMS)
      break
    case 'wait':
      Object.assign(p, duration(bag, input, path))
      break
    case 'check':
      p.condition = condition(bag, refs, input.condition, at('condition'))
      break
    case 'split': {
      const v = input.variants
      if (!isObject(v) || Object.keys(v).length === 0) {
        bag.add(at('variants'), 'The variants must be an object of at least one key and its weight.')
        break
      }
      if (Object.keys(v).length > MAX_SPLIT_VARIANTS)
        bag.add(at('variants'), `The variants must not have more than ${MAX_SPLIT_VARIANTS} items.`)
      const variants: Record<string, number> = {}
      for (const [key, weight] of Object.entries(v)) {
        if (!/^[A-Za-z0-9_-]{1,50}$/.test(key))
          bag.add(join(at('variants'), key), 'The variant key must be 1 to 50 letters, digits, _ or -.')
        const w = positiveNumber(bag, weight, join(at('variants'), key), 1_000_000)
        if (w !== undefined) variants[key] = w
      }
      p.variants = variants
      break
    }
    case 'tag':
    case 'untag':
      p.tag = requiredText(bag, input.tag, at('tag'), 50)
      break
    case 'subscribe':
    case 'unsubscribe': {
      const listId = requiredInteger(bag, input.list_id, at('list_id'))
      if (listId !== undefined) refs.lists.push({ id: listId, path: at('list_id') })
      p.list_id = listId
      break
    }
    case 'edit':
      if (!isObject(input.fields) || Object.keys(input.fields).length === 0)
        bag.add(at('fields'), 'The fields must be an object of at least one field.')
      // A stored node, brought back by a PUT of other fields, keeps its fields as they were saved (earlier
      // rules accepted more): checking them again must not keep the PUT from pausing the pipeline. So for the
      // webhook's headers below.
      else if (!opts.stored) p.fields = parseEditFields(input.fields, at('fields'), bag)
      break
    case 'webhook': {
      const url = requiredText(bag, input.url, at('url'), 2048)
      if (url !== undefined) {
        // The form, and an address or `localhost` named outright, as the account webhook's URL is checked; a
        // name is judged at call time (outbound.ts), on the address dialled, since DNS answers change.
        const parsed = parseOutboundUrl(url)
        const error =
          'error' in parsed
            ? parsed.error
            : !opts.stored && privateTargetError(parsed.url, opts.allowPrivateNetwork !== false)
        if (error) bag.add(at('url'), `${error}.`)
        p.url = url
      }
      if (input.method !== undefined && input.method !== null) {
        const method = typeof input.method === 'string' ? input.method.toUpperCase() : input.method
        p.method = oneOf(bag, method, at('method'), WEBHOOK_METHODS)
      }
      const h = headers(bag, input.headers, at('headers'), opts.stored === true)
      if (h) p.headers = h
      break
    }
    case 'trigger': {
      const id = requiredInteger(bag, input.pipeline_id, at('pipeline_id'))
      if (id !== undefined) refs.pipelines.push({ id, path: at('pipeline_id') })
      p.pipeline_id = id
      break
    }
    case 'goal':
      p.condition = condition(bag, refs, input.condition, at('condition'))
      if (input.timeout !== undefined && input.timeout !== null) {
        if (isObject(input.timeout)) p.timeout = duration(bag, input.timeout, at('timeout'))
        else bag.add(at('timeout'), 'The timeout must be an object with value and unit.')
      }
      break
    case 'end':
    case 'note':
      break
  }
  return Object.keys(bag.errors).length === before ? (p as PipelineNode['properties']) : undefined
}

/** A goal with a timeout ends its wait on its own, so a cycle through it cannot spin. */
export function isWaitingNode(type: NodeType, properties: Props): boolean {
  return type === 'wait' || (type === 'goal' && isObject(properties.timeout))
}
