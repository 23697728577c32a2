import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../../core/http/schemas.js'

/**
 * Wire shapes of `GET /pipelines/{id}/stats` (api.md "Automation statistics") and `stats-detail` (contract §6:
 * as campaigns'). The detail shapes mirror campaign-stats.schemas.ts rather than import it: automations stay
 * below campaigns in the module graph.
 */

const count = (description?: string) => Type.Integer({ minimum: 0, ...(description ? { description } : {}) })
const rate = (description: string) => Type.Number({ description: `${description}, % rounded to 2 decimals` })

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

const StatsDate = (description: string) =>
  Type.String({ maxLength: 64, description: `YYYY-MM-DD, UTC; ${description}` })

export const PipelineStatsQuery = Type.Object({
  from_date: Type.Optional(StatsDate('from this day on; not more than one year back')),
  to_date: Type.Optional(StatsDate('up to and including this day; after from_date')),
})
export type PipelineStatsQueryT = Static<typeof PipelineStatsQuery>

export const PipelineStatsResponse = Type.Object({ stats: PipelineStats })

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

export const PipelineDetailQuery = Type.Object({
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
export type PipelineDetailQueryT = Static<typeof PipelineDetailQuery>

const DetailCounts = Type.Object({
  open: count(),
  send: count(),
  click: count(),
  unsub: count(),
  hard_bounce: count(),
  soft_bounce: count(),
  out_of_band: count(),
  spam: count(),
})

export const PipelineDetailPage = Type.Object({
  total: count('recipients of the automation (matching the filters)'),
  per_page: Type.Integer(),
  next_page_url: Nullable(
    Type.String({ description: 'absolute URL under PUBLIC_URL; null on the last page' }),
  ),
  subscribers: Type.Record(Type.String(), DetailCounts, {
    description: "event counts per recipient address over all the automation's mail to it",
  }),
})
