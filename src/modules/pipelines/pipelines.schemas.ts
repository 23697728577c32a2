import { Type, type Static } from '@sinclair/typebox'
import { sqlDateTime } from '../../core/http/formats.js'
import { AnyObject, EmptyArray, Nullable } from '../../core/http/schemas.js'
import { NODE_TYPES, type PipelineNode } from './pipeline-graph.js'
import { PIPELINE_LIMITS } from './pipeline-validate.js'
import type { PipelineRow } from './pipelines.repo.js'
import { TRIGGER_TYPES } from './pipeline-trigger.js'

const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)))

const NEXT_DOC =
  'Ids of the follow-up nodes: an array on most types; on check an object {yes:[..], no:[..]}, on split one ' +
  'array per variant key, on mail an array (the default port) or {default:[..], quarantine_skip:[..]}; ' +
  'an empty array or null ends the branch.'
const PROPERTIES_DOC =
  'Contains name; per type (contract §6): mail {template, subject?, from_name?, from_email?}, sms {text}, ' +
  'wait {value, unit: seconds|minutes|hours|days}, check {condition}, split {variants:{key:weight}}, ' +
  'tag/untag {tag}, subscribe/unsubscribe {list_id}, edit {fields}, webhook {url, method?, headers?, body?}, ' +
  'trigger {pipeline_id}, goal {condition, timeout?:{value, unit}}, end, note.'

/**
 * A node as sent. `properties` and `next` are judged by the pipeline validator (pipeline-validate.ts), which
 * names each bad part by its path; the schema only fixes the frame.
 */
const NodeInput = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: PIPELINE_LIMITS.nodeId }),
    type: literals(NODE_TYPES),
    properties: Type.Optional(Type.Union([AnyObject, EmptyArray], { description: PROPERTIES_DOC })),
    next: Type.Optional(Type.Unknown({ description: NEXT_DOC })),
  },
  { additionalProperties: true },
)

const TriggerFields = {
  category: Type.Optional(Type.String({ maxLength: 255, description: 'event: the tracker event category' })),
  action: Type.Optional(Type.String({ maxLength: 255, description: 'event: the tracker event action' })),
  tag: Type.Optional(Type.String({ maxLength: 50, description: 'tag: the tag whose addition starts a run' })),
  field: Type.Optional(
    Type.String({ maxLength: 100, description: 'date: birthday, nameday or a custom field holding a date' }),
  ),
  shop: Type.Optional(Type.String({ maxLength: 255, description: 'purchase: only purchases in this shop' })),
}

const TriggerInput = Type.Object(
  { type: literals(TRIGGER_TYPES), ...TriggerFields },
  {
    additionalProperties: true,
    description: 'What starts a run; default {"type":"subscribe"} (joining list_id).',
  },
)

const bodyFields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  list_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
  status: Type.Optional(literals(['active', 'paused'] as const)),
  trigger: Type.Optional(TriggerInput),
  reentry: Type.Optional(literals(['once', 'repeat'] as const)),
  start: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: PIPELINE_LIMITS.nodeId,
      description: 'Id of the first node; default the first of actions',
    }),
  ),
  actions: Type.Array(NodeInput, { minItems: 1, maxItems: PIPELINE_LIMITS.nodes }),
}

export const CreatePipelineBody = Type.Object(bodyFields)
/** PUT takes the same body; a field left out keeps its stored value (with new actions, start defaults again). */
export const UpdatePipelineBody = Type.Partial(Type.Object(bodyFields))
export type PipelineBody = Static<typeof UpdatePipelineBody>

export const NodeObject = Type.Object({
  id: Type.String(),
  type: Type.String({ description: NODE_TYPES.join(', ') }),
  properties: Type.Record(Type.String(), Type.Unknown(), { description: PROPERTIES_DOC }),
  next: Nullable(
    Type.Union([Type.Array(Type.String()), Type.Record(Type.String(), Type.Array(Type.String()))], {
      description: NEXT_DOC,
    }),
  ),
})

const TriggerObject = Type.Object({ type: Type.String(), ...TriggerFields })

const summaryFields = {
  id: Type.Integer(),
  name: Type.String(),
  list_id: Type.Integer(),
  status: Type.String({ description: 'active or paused' }),
  trigger: TriggerObject,
  reentry: Type.String({ description: 'once or repeat' }),
  version: Type.Integer({ description: 'Grows by one on every edit' }),
  created_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
  updated_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
}

/** The Automation resource of api.md, with the contract §6 settings beside it. */
export const PipelineSummary = Type.Object(summaryFields)
export const PipelineObject = Type.Object({
  ...summaryFields,
  start: Type.String(),
  actions: Type.Array(NodeObject),
})
export const NodeList = Type.Object({ data: Type.Array(NodeObject) })
export const NodeOne = Type.Object({ data: NodeObject })
export const ActionParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
  actionId: Type.String({ minLength: 1, maxLength: 1000 }),
})

export function toNodeObject(n: PipelineNode): Static<typeof NodeObject> {
  return { id: n.id, type: n.type, properties: n.properties, next: n.next ?? null }
}

export function toPipelineSummary(row: PipelineRow): Static<typeof PipelineSummary> {
  return {
    id: row.id,
    name: row.name,
    list_id: row.listId,
    status: row.status,
    trigger: row.trigger,
    reentry: row.reentry,
    version: row.version,
    created_at: sqlDateTime(row.createdAt),
    updated_at: sqlDateTime(row.updatedAt),
  }
}

export function toPipelineObject(row: PipelineRow): Static<typeof PipelineObject> {
  return { ...toPipelineSummary(row), start: row.start, actions: row.actions.map(toNodeObject) }
}
