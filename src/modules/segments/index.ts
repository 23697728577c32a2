import type { ModuleDef } from '../registry.js'
import { segmentRoutes } from './segments.routes.js'

export { segments } from './segments.table.js'
export {
  CONDITION_LIMITS,
  CONTACT_FIELDS,
  FIELD_OPS,
  parseCondition,
  requireCondition,
  walkCondition,
  type Condition,
  type ConditionValue,
  type EventCondition,
  type FieldCondition,
  type FieldOp,
  type ParseResult,
} from './condition.js'
export { conditionSql, segmentMembersSql, type ConditionSqlOptions } from './condition.sql.js'
export { createSegmentService, findSegments } from './segments.service.js'

/** Segments of a list: saved conditions (contract §6 language) that campaigns can target. */
export const segmentsModule: ModuleDef = { name: 'segments', apiRoutes: segmentRoutes }
