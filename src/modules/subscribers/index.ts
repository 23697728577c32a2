export { contacts, memberships } from './subscribers.table.js'
export * from './subscribers.schemas.js'
export {
  applyComplaint,
  applyHardBounce,
  applySoftBounce,
  suppressedAddresses,
  unsubscribeEverywhere,
} from './deliverability.repo.js'
