import { Type, type Static } from '@sinclair/typebox'
import { AnyObject, PageNumber, PerPage } from '../../core/http/schemas.js'

/** `GET /subscribers/{email}/automation-log` (api.md; query names of contract §3 and common alternatives). */

export const MAX_AUTOMATION_LOG_PAGE = 100
export const DEFAULT_AUTOMATION_LOG_PAGE = 20

export const LOG_SORTS = ['timestamp', 'id', 'pipeline_id'] as const
const SortColumn = Type.Union(
  LOG_SORTS.map((s) => Type.Literal(s)),
  { description: `${LOG_SORTS.join(', ')}; default timestamp` },
)
const SortDirection = Type.Union([Type.Literal('asc'), Type.Literal('desc')], {
  description: 'asc or desc (any case); default desc',
})

/** The contract's names come first; the others are what clients of similar APIs send for the same thing. */
export const SORT_COLUMN_KEYS = ['sort_by', 'sort', 'order_by'] as const
export const SORT_DIRECTION_KEYS = ['sort_dir', 'direction', 'order', 'sort_order'] as const

export const AutomationLogQuery = Type.Object({
  page: PageNumber,
  per_page: PerPage(MAX_AUTOMATION_LOG_PAGE, DEFAULT_AUTOMATION_LOG_PAGE),
  sort_by: Type.Optional(SortColumn),
  sort: Type.Optional(SortColumn),
  order_by: Type.Optional(SortColumn),
  sort_dir: Type.Optional(SortDirection),
  direction: Type.Optional(SortDirection),
  order: Type.Optional(SortDirection),
  sort_order: Type.Optional(SortDirection),
})
export type AutomationLogQueryT = Static<typeof AutomationLogQuery>

export const AutomationLogParams = Type.Object({ email: Type.String({ maxLength: 1000 }) })

/** api.md "Automation log entry". */
export const AutomationLogEntry = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer({ description: 'the account id' }),
  pipeline_id: Type.Integer(),
  action_id: Type.String({ description: 'the node id' }),
  trigger_id: Type.String({ description: 'the run id' }),
  email: Type.String(),
  props: AnyObject,
  next: Type.Unknown({ description: 'the node ids the run went on to, or null' }),
  timestamp: Type.String({ description: 'ISO 8601 UTC with microseconds' }),
})

export const AutomationLogPage = Type.Object({
  automation_log: Type.Array(AutomationLogEntry),
  current_page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
  last_page: Type.Integer(),
})
