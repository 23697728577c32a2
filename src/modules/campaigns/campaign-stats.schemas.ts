import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../../core/http/schemas.js'
import { EmailLogEntry } from '../events/index.js'

const count = (description?: string) => Type.Integer({ minimum: 0, ...(description ? { description } : {}) })
const rate = (description: string) => Type.Number({ description: `${description}, % rounded to 2 decimals` })

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

const StatsDate = (description: string) =>
  Type.String({ maxLength: 64, description: `YYYY-MM-DD, UTC; ${description}` })

export const CampaignStatsQuery = Type.Object({
  from_date: Type.Optional(StatsDate('from this day on; not more than one year back')),
  to_date: Type.Optional(StatsDate('up to and including this day; after from_date')),
})
export type CampaignStatsQueryT = Static<typeof CampaignStatsQuery>

export const CampaignStatsResponse = Type.Object({ stats: CampaignStats })

/** Event names of a stats-detail row; `spam` counts complaints (`spam` and `spam_complaint` events). */
export const DETAIL_EVENTS = [
  'open',
  'send',
  'click',
  'unsub',
  'hard_bounce',
  'soft_bounce',
  'out_of_band',
  'spam',
] as const
export type DetailEvent = (typeof DETAIL_EVENTS)[number]

export const MAX_STATS_DETAIL_PAGE = 5000
export const DEFAULT_STATS_DETAIL_PAGE = 100

export const StatsDetailQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, default: 1 })),
  per_page: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_STATS_DETAIL_PAGE, default: DEFAULT_STATS_DETAIL_PAGE }),
  ),
  email: Type.Optional(Type.String({ maxLength: 1000, description: 'only this recipient' })),
  event: Type.Optional(
    Type.Union(
      DETAIL_EVENTS.map((e) => Type.Literal(e)),
      { description: 'only recipients with at least one such event' },
    ),
  ),
  from_date: Type.Optional(StatsDate('count only events from this day on')),
})
export type StatsDetailQueryT = Static<typeof StatsDetailQuery>

export const StatsDetailCounts = Type.Object({
  open: count(),
  send: count(),
  click: count(),
  unsub: count(),
  hard_bounce: count(),
  soft_bounce: count(),
  out_of_band: count(),
  spam: count(),
})

export const StatsDetailPage = Type.Object({
  total: count('recipients of the campaign (matching the filters)'),
  per_page: Type.Integer(),
  next_page_url: Nullable(
    Type.String({ description: 'absolute URL under PUBLIC_URL; null on the last page' }),
  ),
  subscribers: Type.Record(Type.String(), StatsDetailCounts, {
    description: 'event counts per recipient address, in recipient order',
  }),
})

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
