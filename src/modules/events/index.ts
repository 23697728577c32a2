/**
 * The log of what happened to mail (the events table, read by the email log and the campaign log) and the
 * statistics counters kept beside it. Writing an event with its consequences is the outcomes module's job.
 */
export { events, type EventType } from './events.table.js'
export {
  emailLogPage,
  eventsInsertSql,
  pseudonymiseAddress,
  type EmailLogRow,
  type EventColumns,
  type NewEvent,
} from './events.repo.js'
export {
  addToCounters,
  counterIncrementsSql,
  readCounters,
  readScopeCounters,
  COUNTER_NAMES,
  type CounterName,
  type Counters,
  type CounterScope,
} from './counters.repo.js'
export { campaignLog, eventFilter, foldEventsQuery } from './event-log.js'
export {
  DEFAULT_EMAIL_LOG_PAGE,
  EmailLogEntry,
  AccountCampaignLogQuery,
  CampaignLogQuery,
  EmailLogQuery,
  toEmailLogEntry,
  type CampaignLogQueryT,
  type EmailLogQueryT,
} from './event-log.schemas.js'
export { percent, deliveryOf, ratedStats } from './stats-rates.js'
export { readKindCounters, type CountedKind } from './kind-stats.repo.js'
export {
  scopeConversions,
  scopeDetailPage,
  type DetailFilter,
  type DetailRow,
  type StatsScope,
} from './scope-stats.repo.js'
export {
  DEFAULT_STATS_DETAIL_PAGE,
  DETAIL_EVENTS,
  MAX_STATS_DETAIL_PAGE,
  StatsDetailCounts,
  StatsDetailEmailsBody,
  StatsDetailQuery,
  StatsRangeQuery,
  statCount,
  statRate,
  statsDetailPageSchema,
  type DetailEvent,
  type StatsDetailEmailsBodyT,
  type StatsDetailQueryT,
  type StatsRangeQueryT,
} from './scope-stats.schemas.js'
export { readStatsDetail } from './stats-detail.js'
