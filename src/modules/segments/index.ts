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
