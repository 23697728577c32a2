import { Type, type Static } from '@sinclair/typebox'
import { Nullable, PageNumber, PerPage } from '../../core/http/schemas.js'

/**
 * Wire shapes shared by the statistics of every scope that counts mail (a campaign; an automation, or one of
 * its mail nodes): contract §5 and §6 give campaigns and automations the same query names and detail rows.
 */

export const statCount = (description?: string) =>
  Type.Integer({ minimum: 0, ...(description ? { description } : {}) })
export const statRate = (description: string) =>
  Type.Number({ description: `${description}, % rounded to 2 decimals` })

const StatsDate = (description: string) =>
  Type.String({ maxLength: 64, description: `YYYY-MM-DD, UTC; ${description}` })

/** `from_date` / `to_date` of a stats call (contract §5). */
export const StatsRangeQuery = Type.Object({
  from_date: Type.Optional(StatsDate('from this day on; not more than one year back')),
  to_date: Type.Optional(StatsDate('up to and including this day; after from_date')),
})
export type StatsRangeQueryT = Static<typeof StatsRangeQuery>

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
  page: PageNumber,
  per_page: PerPage(MAX_STATS_DETAIL_PAGE, DEFAULT_STATS_DETAIL_PAGE),
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

/** The body of a `POST …/stats-detail`: the page is of these recipients only (the query as for GET). */
export const StatsDetailEmailsBody = Type.Object({
  emails: Type.Array(Type.String({ maxLength: 1000 }), {
    maxItems: MAX_STATS_DETAIL_PAGE,
    description: 'recipient addresses to report on',
  }),
})
export type StatsDetailEmailsBodyT = Static<typeof StatsDetailEmailsBody>

export const StatsDetailCounts = Type.Object({
  open: statCount(),
  send: statCount(),
  click: statCount(),
  unsub: statCount(),
  hard_bounce: statCount(),
  soft_bounce: statCount(),
  out_of_band: statCount(),
  spam: statCount(),
})

/** A stats-detail page; the descriptions say whose recipients it lists. */
export const statsDetailPageSchema = (total: string, subscribers: string) =>
  Type.Object({
    total: statCount(total),
    per_page: Type.Integer(),
    next_page_url: Nullable(
      Type.String({ description: 'absolute URL under PUBLIC_URL; null on the last page' }),
    ),
    subscribers: Type.Record(Type.String(), StatsDetailCounts, { description: subscribers }),
  })
