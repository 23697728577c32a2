import { isDeepStrictEqual } from 'node:util'
import { FieldErrorBag, type FieldErrors } from '../../core/http/errors.js'
import { checkCycles, checkReachable } from './graph-checks.js'
import {
  emptyRefs,
  parseProperties,
  type NodeRefs,
  type ParseOptions,
  type RefUse,
} from './node-properties.js'
import {
  NODE_TYPES,
  portsOf,
  type NodeNext,
  type PipelineNode,
  type PipelineStatus,
  type PipelineTrigger,
  type Reentry,
} from './pipeline-graph.js'
import { parseTrigger } from './pipeline-trigger.js'
import { isObject, join, label, oneOf, requiredInteger, requiredText } from './validate-helpers.js'

/**
 * The validator of a pipeline body (contract §6): every field, every node's properties per type, `next` per
 * type's ports, ids (unique, none dangling), `start`, reachability, and no cycle without a wait. Errors are
 * the contract's `{field path: [messages]}` with dotted paths (`actions.3.next.yes.0`). The engine trusts what
 * passes, so anything it could trip on is refused here.
 */

export const PIPELINE_LIMITS = {
  nodes: 500,
  nodeId: 100,
  idsPerPort: 50,
  /** Serialised size of one node's properties. */
  propertiesBytes: 100_000,
} as const

export const PIPELINE_STATUSES: readonly PipelineStatus[] = ['active', 'paused']
export const REENTRIES: readonly Reentry[] = ['once', 'repeat']

/** A pipeline as it is stored, normalised. */
export interface ValidPipeline {
  name: string
  listId: number
  status: PipelineStatus
  trigger: PipelineTrigger
  reentry: Reentry
  start: string
  actions: PipelineNode[]
}

/** What the graph refers to in the account: all must exist there. */
export interface PipelineRefs {
  templates: RefUse[]
  lists: RefUse[]
  pipelines: RefUse[]
}

export type ShapeResult =
  | { ok: true; pipeline: ValidPipeline; refs: PipelineRefs }
  | { ok: false; errors: FieldErrors; refs: PipelineRefs }

/** Answers which of the ids exist in the account (the service asks the database). */
export interface RefLookup {
  templates(ids: number[]): Promise<Set<number>>
  lists(ids: number[]): Promise<Set<number>>
  pipelines(ids: number[]): Promise<Set<number>>
}

export type ValidationResult = { ok: true; pipeline: ValidPipeline } | { ok: false; errors: FieldErrors }

function badNext(node: { type: string }, ports: string[] | null): string {
  if (ports === null) return 'The next must be an array of node ids or null.'
  if (node.type === 'mail')
    return 'The next must be an array of node ids or an object of ports: default, quarantine_skip.'
  return ports.length > 0
    ? `The next must be an object of ports: ${ports.join(', ')}.`
    : 'The next must be an object of ports named by the variants.'
}

/** The ids one port lists: each must name a node. */
function idList(bag: FieldErrorBag, v: unknown, path: string, ids: Set<string>): string[] | undefined {
  if (v === null || v === undefined) return []
  if (!Array.isArray(v)) {
    bag.add(path, `The ${label(path)} must be an array of node ids.`)
    return undefined
  }
  if (v.length > PIPELINE_LIMITS.idsPerPort) {
    bag.add(path, `The ${label(path)} must not have more than ${PIPELINE_LIMITS.idsPerPort} items.`)
    return undefined
  }
  const out: string[] = []
  v.forEach((id, j) => {
    const at = join(path, j)
    const text = typeof id === 'number' ? String(id) : id
    if (typeof text !== 'string' || !ids.has(text))
      bag.add(at, `The ${label(at)} names no node of this pipeline.`)
    else out.push(text)
  })
  return out.length === v.length ? out : undefined
}

/** `next` of one node by its type's ports (api.md rules 1–6). */
function parseNext(
  bag: FieldErrorBag,
  node: Pick<PipelineNode, 'type' | 'properties'>,
  v: unknown,
  path: string,
  ids: Set<string>,
): NodeNext | undefined {
  if (v === null || v === undefined) return null
  const ports = portsOf(node)
  if (Array.isArray(v)) {
    // An empty array ends a branch on any type; a filled one is the single way on (mail: its default port).
    if (v.length > 0 && ports !== null && node.type !== 'mail') {
      bag.add(path, badNext(node, ports))
      return undefined
    }
    if (v.length > 0 && node.type === 'end') {
      bag.add(path, 'An end node leads nowhere: its next must be empty.')
      return undefined
    }
    return idList(bag, v, path, ids)
  }
  if (!isObject(v) || ports === null) {
    bag.add(path, badNext(node, ports))
    return undefined
  }
  const out: Record<string, string[]> = {}
  let ok = true
  for (const [port, list] of Object.entries(v)) {
    const at = join(path, port)
    if (!ports.includes(port)) {
      bag.add(at, `The ${port} is not a port of a ${node.type} node (ports: ${ports.join(', ')}).`)
      ok = false
      continue
    }
    const parsed = idList(bag, list, at, ids)
    if (parsed) out[port] = parsed
    else ok = false
  }
  return ok ? out : undefined
}

/** The node ids in order, reporting bad and repeated ones. */
function nodeIds(bag: FieldErrorBag, actions: unknown[]): (string | undefined)[] {
  const seen = new Set<string>()
  return actions.map((raw, i) => {
    if (!isObject(raw)) return undefined
    const at = `actions.${i}.id`
    const id = requiredText(bag, raw.id, at, PIPELINE_LIMITS.nodeId)
    if (id === undefined) return undefined
    if (seen.has(id)) {
      bag.add(at, `The id ${id} is used by another node.`)
      return undefined
    }
    seen.add(id)
    return id
  })
}

function parseNodes(
  bag: FieldErrorBag,
  refs: NodeRefs,
  input: unknown,
  opts: ParseOptions,
): PipelineNode[] | undefined {
  if (input === undefined || input === null) {
    bag.add('actions', 'The actions field is required.')
    return undefined
  }
  if (!Array.isArray(input)) {
    bag.add('actions', 'The actions must be an array of nodes.')
    return undefined
  }
  if (input.length === 0) {
    bag.add('actions', 'The actions must have at least 1 items.')
    return undefined
  }
  if (input.length > PIPELINE_LIMITS.nodes) {
    bag.add('actions', `The actions must not have more than ${PIPELINE_LIMITS.nodes} items.`)
    return undefined
  }
  const ids = nodeIds(bag, input)
  const known = new Set(ids.filter((id): id is string => id !== undefined))
  const nodes: PipelineNode[] = []
  input.forEach((raw, i) => {
    const at = `actions.${i}`
    if (!isObject(raw)) {
      bag.add(at, `The actions.${i} must be a node object.`)
      return
    }
    const type = oneOf(bag, raw.type, `${at}.type`, NODE_TYPES)
    const id = ids[i]
    if (!type) return
    if (JSON.stringify(raw.properties ?? {}).length > PIPELINE_LIMITS.propertiesBytes) {
      bag.add(
        `${at}.properties`,
        `The properties must not be larger than ${PIPELINE_LIMITS.propertiesBytes} bytes.`,
      )
      return
    }
    // A node sent back as it is stored (a client adding a node to a graph it read) keeps what earlier rules
    // accepted, as on a PUT of other fields. The records it names are still looked up: a template deleted since
    // is worth telling whoever is editing the graph.
    const stored = id !== undefined && isStoredNode(opts.storedNodes?.get(id), type, raw.properties)
    const properties = parseProperties(bag, refs, type, raw.properties, `${at}.properties`, {
      ...opts,
      stored: opts.stored || stored,
    })
    if (!properties) return
    const next = parseNext(bag, { type, properties }, raw.next, `${at}.next`, known)
    if (id === undefined || next === undefined) return
    nodes.push({ id, type, properties, next })
  })
  return nodes.length === input.length ? nodes : undefined
}

function isStoredNode(
  node: Pick<PipelineNode, 'type' | 'properties'> | undefined,
  type: string,
  properties: unknown,
): boolean {
  return node !== undefined && node.type === type && isDeepStrictEqual(node.properties, properties)
}

/** `opened`/`clicked` in a condition must name a mail node of this graph. */
function checkMailRefs(bag: FieldErrorBag, nodes: PipelineNode[], refs: NodeRefs): void {
  const mail = new Set(nodes.filter((n) => n.type === 'mail').map((n) => n.id))
  for (const r of refs.mailNodes) {
    if (!mail.has(r.id)) bag.add(r.path, `The ${label(r.path)} must name a mail node of this pipeline.`)
  }
}

/**
 * Everything that needs no database; the references to check there come back with the result.
 * `opts.stored`: the actions are the stored ones (a partial PUT without them), as they were saved;
 * `opts.allowPrivateNetwork` false: webhook nodes may not name private addresses (ParseOptions).
 */
export function checkPipelineShape(input: unknown, opts: ParseOptions = {}): ShapeResult {
  const bag = new FieldErrorBag()
  const nodeRefs = emptyRefs()
  const body = isObject(input) ? input : {}
  if (!isObject(input)) bag.add('body', 'The body must be a JSON object.')
  const name = requiredText(bag, body.name, 'name', 255)
  const listId = requiredInteger(bag, body.list_id, 'list_id')
  const status = oneOf(bag, body.status, 'status', PIPELINE_STATUSES, 'active')
  const reentry = oneOf(bag, body.reentry, 'reentry', REENTRIES, 'once')
  const trigger = parseTrigger(bag, body.trigger)
  const actions = parseNodes(bag, nodeRefs, body.actions, opts)
  let start: string | undefined
  if (body.start === undefined || body.start === null) start = actions?.[0]?.id
  else {
    start = requiredText(bag, body.start, 'start', PIPELINE_LIMITS.nodeId)
    if (start !== undefined && actions && !actions.some((n) => n.id === start)) {
      bag.add('start', 'The start names no node of this pipeline.')
      start = undefined
    }
  }
  // The graph as a whole is judged only once every node is sound: its edges are known to exist then.
  if (actions && start !== undefined) {
    checkMailRefs(bag, actions, nodeRefs)
    checkReachable(bag, actions, start)
    checkCycles(bag, actions)
  }
  const refs: PipelineRefs = {
    templates: nodeRefs.templates,
    lists: listId === undefined ? nodeRefs.lists : [{ id: listId, path: 'list_id' }, ...nodeRefs.lists],
    pipelines: nodeRefs.pipelines,
  }
  if (!bag.empty) return { ok: false, errors: bag.errors, refs }
  return {
    ok: true,
    pipeline: {
      name: name!,
      listId: listId!,
      status: status!,
      trigger: trigger!,
      reentry: reentry!,
      start: start!,
      actions: actions!,
    },
    refs,
  }
}

async function checkRefs(
  bag: FieldErrorBag,
  uses: RefUse[],
  exists: (ids: number[]) => Promise<Set<number>>,
  what: string,
) {
  if (uses.length === 0) return
  const found = await exists([...new Set(uses.map((u) => u.id))])
  for (const u of uses)
    if (!found.has(u.id)) bag.add(u.path, `The selected ${label(u.path)} is invalid: no such ${what}.`)
}

/**
 * The whole validation: the shape, then what it names in the account (templates of mail nodes, lists of
 * `list_id` and of subscribe/unsubscribe nodes, pipelines of trigger nodes). Every error is reported at once.
 * `given`: the top-level fields a partial update brings; names in the others are stored ones, not checked again
 * (a template or list deleted since is the engine's to meet, and must not keep a PUT of `status` from pausing the
 * pipeline).
 */
export async function validatePipeline(
  input: unknown,
  lookup: RefLookup,
  given?: ReadonlySet<string>,
  opts: Pick<ParseOptions, 'allowPrivateNetwork' | 'storedNodes'> = {},
): Promise<ValidationResult> {
  const shape = checkPipelineShape(input, { ...opts, stored: given !== undefined && !given.has('actions') })
  const bag = new FieldErrorBag()
  if (!shape.ok) for (const [p, msgs] of Object.entries(shape.errors)) for (const m of msgs) bag.add(p, m)
  const checked = (uses: RefUse[]) => (given ? uses.filter((u) => given.has(u.path.split('.')[0]!)) : uses)
  await checkRefs(bag, checked(shape.refs.templates), (ids) => lookup.templates(ids), 'template')
  await checkRefs(bag, checked(shape.refs.lists), (ids) => lookup.lists(ids), 'list')
  await checkRefs(bag, checked(shape.refs.pipelines), (ids) => lookup.pipelines(ids), 'pipeline')
  if (!bag.empty || !shape.ok) return { ok: false, errors: bag.errors }
  return { ok: true, pipeline: shape.pipeline }
}
