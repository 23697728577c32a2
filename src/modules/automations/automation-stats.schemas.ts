import { Type, type Static } from '@sinclair/typebox'
import {
  StatsDetailEmailsBody,
  StatsDetailQuery,
  StatsRangeQuery,
  statCount as count,
  statRate as rate,
  statsDetailPageSchema,
  type StatsDetailEmailsBodyT,
  type StatsDetailQueryT,
  type StatsRangeQueryT,
} from '../events/index.js'

/**
 * Wire shapes of `GET /pipelines/{id}/stats` (api.md "Automation statistics") and `stats-detail` (contract §6:
 * as campaigns', whose query and row shapes both take from the events module).
 */

export const PipelineStats = Type.Object({
  triggered: count('runs started'),
  ended: count('runs that reached an end'),
  inject: count('mails the relay accepted'),
  send: count('delivered: inject − unique bounces'),
  delivery_rate: rate('send / inject'),
  open: count('unique opens (mails opened)'),
  total_open: count('all opens'),
  not_opened: count('send − open'),
  open_rate: rate('open / send'),
  click: count('unique clicks (mails clicked)'),
  total_click: count('all clicks'),
  click_rate: rate('click / send'),
  soft_bounce: count('mails soft-bounced'),
  hard_bounce: count('mails hard-bounced'),
  bounce: count('unique bounces, hard and soft'),
  bounce_rate: rate('bounce / inject'),
  spam: count('complaints'),
  unsub: count('unsubscriptions'),
  conversions: count('purchases by recipients within 7 days after their first click on a mail'),
  conversions_value: Type.Number({ description: 'summed amount of those purchases' }),
  open_in_range: Type.Optional(count('mails with an open in the date range (only with a range)')),
  click_in_range: Type.Optional(count('mails with a click in the date range (only with a range)')),
  inject_in_range: Type.Optional(count('mails injected in the date range (only with a range)')),
})
export type PipelineStatsT = Static<typeof PipelineStats>

export const PipelineIdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647 }) })

export const PipelineStatsQuery = StatsRangeQuery
export type PipelineStatsQueryT = StatsRangeQueryT

export const PipelineStatsResponse = Type.Object({ stats: PipelineStats })

export const PipelineDetailQuery = StatsDetailQuery
export type PipelineDetailQueryT = StatsDetailQueryT
export const PipelineDetailEmailsBody = StatsDetailEmailsBody
export type PipelineDetailEmailsBodyT = StatsDetailEmailsBodyT

export const PipelineDetailPage = statsDetailPageSchema(
  'recipients of the automation (matching the filters)',
  "event counts per recipient address over all the automation's mail to it",
)
