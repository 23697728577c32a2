export { contacts, memberships } from './subscribers.table.js'
export * from './subscribers.schemas.js'
export {
  applyComplaint,
  applyHardBounce,
  applySoftBounce,
  addressKey,
  suppressedAmong,
  type AccountAddress,
  unsubscribeEverywhere,
} from './deliverability.repo.js'
export type { ErasureStep } from './subscriber-delete.service.js'
export { erasedStandIn } from './erased-suppressions.js'
export { parseEditFields } from './subscriber-fields.validation.js'
