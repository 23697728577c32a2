/**
 * The automation format of contract §6, as stored and as the engine reads it. The pipelines module validates
 * a graph before it is stored, so the engine may trust these shapes.
 */

export const NODE_TYPES = [
  'mail',
  'sms',
  'wait',
  'check',
  'split',
  'tag',
  'untag',
  'subscribe',
  'unsubscribe',
  'edit',
  'webhook',
  'trigger',
  'goal',
  'end',
  'note',
] as const
export type NodeType = (typeof NODE_TYPES)[number]

export type TimeUnit = 'seconds' | 'minutes' | 'hours' | 'days'
export interface Duration {
  value: number
  unit: TimeUnit
}

/** Contract §6 conditions, used by check and goal nodes. */
export type Condition =
  | { all: Condition[] }
  | { any: Condition[] }
  | { not: Condition }
  | { field: string; op: 'eq' | 'neq' | 'contains' | 'gt' | 'lt' | 'exists'; value?: unknown }
  | { tag: string }
  | { opened: string }
  | { clicked: string }
  | { purchased: { days: number } }
  | { event: { category?: string; action?: string } }
  | { in_list: number }

/** `next` as api.md writes it: an array on most types, an object of ports on check, split and mail. */
export type NodeNext = string[] | Record<string, string[]> | null

export interface PipelineNode {
  id: string
  type: NodeType
  /** Always holds `name`; the rest per type, as contract §6 lists. */
  properties: { name: string } & Record<string, unknown>
  next: NodeNext
}

export type TriggerType = 'subscribe' | 'api' | 'event' | 'purchase' | 'tag' | 'date'

export interface PipelineTrigger {
  type: TriggerType
  /** event: the tracker event's category and action (either may be left out: any). */
  category?: string
  action?: string
  /** tag: the tag whose addition starts a run. */
  tag?: string
  /** date: the subscriber field holding the date (`birthday`, `nameday` or a custom field). */
  field?: string
  /** purchase: only purchases in this shop (absent: any shop). */
  shop?: string
}

export type PipelineStatus = 'active' | 'paused'
export type Reentry = 'once' | 'repeat'

/** The ports a node of each type may have in an object `next`; null: `next` is a plain array. */
export function portsOf(node: Pick<PipelineNode, 'type' | 'properties'>): string[] | null {
  switch (node.type) {
    case 'check':
      return ['yes', 'no']
    case 'mail':
      return ['default', 'quarantine_skip']
    case 'split': {
      const variants = node.properties.variants
      return variants && typeof variants === 'object' ? Object.keys(variants) : []
    }
    default:
      return null
  }
}

/** The ids a node leads to through one port (`default` for plain arrays), never null. */
export function nextIds(node: Pick<PipelineNode, 'next'>, port = 'default'): string[] {
  const next = node.next
  if (!next) return []
  if (Array.isArray(next)) return next
  return next[port] ?? []
}

/** Every id a node may lead to, over all its ports. */
export function allNextIds(node: Pick<PipelineNode, 'next'>): string[] {
  const next = node.next
  if (!next) return []
  if (Array.isArray(next)) return next
  return Object.values(next).flat()
}
