import type { ModuleDef } from '../registry.js'
import { emailLogRoutes } from './email-log.routes.js'

export { events, type EventType } from './events.table.js'
export { emailLogPage, pseudonymiseAddress, type NewEvent } from './events.repo.js'

/** The events table and what reads it over the API: `GET /subscribers/{email}/email-log`. */
export const eventsModule: ModuleDef = { name: 'events', apiRoutes: emailLogRoutes }
export {
  addToCounters,
  counterIncrementsSql,
  readCounters,
  COUNTER_NAMES,
  type CounterName,
  type Counters,
  type CounterScope,
} from './counters.repo.js'
export { campaignLog, foldEventsQuery } from './email-log.service.js'
export { EmailLogEntry, EmailLogQuery, type EmailLogQueryT } from './email-log.schemas.js'
export { percent, deliveryOf, ratedStats } from './stats-rates.js'
export { readKindCounters } from './kind-stats.repo.js'
