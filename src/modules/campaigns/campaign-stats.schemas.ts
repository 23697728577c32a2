import { Type, type Static } from '@sinclair/typebox'
import {
  EmailLogEntry,
  StatsDetailQuery,
  StatsRangeQuery,
  statCount as count,
  statRate as rate,
  statsDetailPageSchema,
  type StatsDetailQueryT,
  type StatsRangeQueryT,
} from '../events/index.js'

/** api.md "Campaign statistics (inside `stats`)"; definitions in contract §5. */
export const CampaignStats = Type.Object({
  inject: count('messages the relay accepted'),
  delivery: count('inject − unique bounces'),
  delivery_rate: rate('delivery / inject'),
  open: count('unique opens'),
  total_open: count('all opens'),
  open_rate: rate('open / delivery'),
  click: count('unique clicks'),
  total_click: count('all clicks'),
  click_rate: rate('click / delivery'),
  bounce: count('unique bounces, hard and soft'),
  bounce_rate: rate('bounce / inject'),
  spam: count('complaints'),
  spam_rate: rate('spam / delivery'),
  unsub: count('unsubscriptions'),
  unsub_rate: rate('unsub / delivery'),
  conversions: count('purchases by recipients within 7 days after their first click'),
  conversions_value: Type.Number({ description: 'summed amount of those purchases' }),
  opened_in_range: Type.Optional(count('recipients with an open in the date range (only with a range)')),
  clicked_in_range: Type.Optional(count('recipients with a click in the date range (only with a range)')),
})
export type CampaignStatsT = Static<typeof CampaignStats>

/** The `stats` of the campaign detail (api.md "Campaign (detail)"); `send` = `delivered` = delivery. */
export const CampaignDetailStats = Type.Object({
  inject: count(),
  send: count(),
  delivered: count(),
  open: count(),
  total_open: count(),
  click: count(),
  total_click: count(),
  hard_bounce: count(),
  spam: count(),
  unsub: count(),
  openrate: rate('open / delivered'),
  clickrate: rate('click / delivered'),
  delivery_rate: rate('delivered / inject'),
})
export type CampaignDetailStatsT = Static<typeof CampaignDetailStats>

export const CampaignStatsQuery = StatsRangeQuery
export type CampaignStatsQueryT = StatsRangeQueryT

export const CampaignStatsResponse = Type.Object({ stats: CampaignStats })

export { StatsDetailQuery, type StatsDetailQueryT }

export const StatsDetailPage = statsDetailPageSchema(
  'recipients of the campaign (matching the filters)',
  'event counts per recipient address, in recipient order',
)

/** An email log entry with the event's id. */
export const CampaignLogEntry = Type.Object({
  id: Type.Integer(),
  ...EmailLogEntry.properties,
})

export const CampaignLogPage = Type.Object({
  campaign_log: Type.Array(CampaignLogEntry),
  current_page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
  last_page: Type.Integer(),
})
