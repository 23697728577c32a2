import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import type { DetailEvent } from './campaign-stats.schemas.js'

/**
 * Purchases by the campaign's recipients (same account and address) from their first click on it up to
 * seven days later (contract §5). Each purchase counts once even if the address had two rows. The campaign's
 * messages are all of its account, so the inner query needs only (campaign_id, email, first_click_at): a
 * partial index on exactly that for clicked rows makes this a merge of two index-only scans.
 */
export async function campaignConversions(
  ex: Executor,
  campaignId: number,
): Promise<{ conversions: number; value: number }> {
  const row = await queryOne<{ n: number; value: string }>(
    ex,
    // Amounts are numeric and summed as decimals (binary floats would show 0.30000000000000004); the exact
    // decimal text becomes the JSON number.
    sql`SELECT count(*)::int AS n, coalesce(sum(t.amount), 0)::text AS value
        FROM transactions t
        WHERE t.account_id = (SELECT account_id FROM campaigns WHERE id = ${campaignId})
          AND EXISTS (
            SELECT 1 FROM messages m
            WHERE m.campaign_id = ${campaignId} AND m.email = t.email AND m.first_click_at IS NOT NULL
              AND t.occurred_at >= m.first_click_at
              AND t.occurred_at <= m.first_click_at + interval '7 days')`,
  )
  return { conversions: Number(row?.n ?? 0), value: Number(row?.value ?? 0) }
}

/**
 * Recipients (messages) with at least one `event` (open or click) in [from, to), an unbounded side left
 * open, from `events_campaign_idx` (campaign_id, event, occurred_at). 'all' when the range holds every such
 * event of the campaign (two index probes tell): then the answer is the unique counter itself, and the
 * common "whole campaign" range costs nothing.
 */
export async function engagedInRange(
  ex: Executor,
  campaignId: number,
  event: 'open' | 'click',
  from: Date | undefined,
  to: Date | undefined,
): Promise<number | 'all'> {
  const span = await queryOne<{ first: string | Date | null; last: string | Date | null }>(
    ex,
    sql`SELECT min(occurred_at) AS first, max(occurred_at) AS last FROM events
        WHERE campaign_id = ${campaignId} AND event = ${event}`,
  )
  if (!span?.first || !span.last) return 0
  const first = new Date(span.first)
  const last = new Date(span.last)
  if ((!from || from <= first) && (!to || to > last)) return 'all'
  if ((from && from > last) || (to && to <= first)) return 0
  const row = await queryOne<{ n: number }>(
    ex,
    sql`SELECT count(DISTINCT message_id)::int AS n FROM events
        WHERE campaign_id = ${campaignId} AND event = ${event}
          AND occurred_at >= ${(from ?? first).toISOString()}::timestamptz
          AND occurred_at < ${(to ?? new Date(last.getTime() + 1)).toISOString()}::timestamptz`,
  )
  return Number(row?.n ?? 0)
}

export interface DetailFilter {
  email?: string | undefined
  event?: DetailEvent | undefined
  /** Only events from this instant on are counted (and looked for by `event`). */
  from?: Date | undefined
}

export type DetailRow = { email: string } & Record<DetailEvent, number>

/** `spam` on the wire is either spelling of a complaint in `events`. */
const eventsOf = (e: DetailEvent): string[] => (e === 'spam' ? ['spam', 'spam_complaint'] : [e])

/**
 * One page of a campaign's recipients (message rows, in the order they were frozen; rows skipped as
 * suppressed are no recipients) with the count of each of their events, and how many recipients match.
 */
export async function statsDetailPage(
  ex: Executor,
  campaignId: number,
  filter: DetailFilter,
  limit: number,
  offset: number,
): Promise<{ rows: DetailRow[]; total: number }> {
  const since = filter.from ? sql`AND e.occurred_at >= ${filter.from.toISOString()}::timestamptz` : sql``
  const where = sql`m.campaign_id = ${campaignId} AND m.status <> 3
    ${filter.email !== undefined ? sql`AND m.email = ${filter.email}` : sql``}
    ${
      filter.event
        ? sql`AND EXISTS (SELECT 1 FROM events e WHERE e.message_id = m.id
                AND e.event IN (SELECT jsonb_array_elements_text(${JSON.stringify(eventsOf(filter.event))}::jsonb))
                ${since})`
        : sql``
    }`
  const rows = await queryRows<DetailRow>(
    ex,
    sql`WITH page AS (SELECT m.id, m.email FROM messages m WHERE ${where} ORDER BY m.id LIMIT ${limit} OFFSET ${offset})
        SELECT p.email,
               count(e.id) FILTER (WHERE e.event = 'open')::int AS open,
               count(e.id) FILTER (WHERE e.event = 'send')::int AS send,
               count(e.id) FILTER (WHERE e.event = 'click')::int AS click,
               count(e.id) FILTER (WHERE e.event = 'unsub')::int AS unsub,
               count(e.id) FILTER (WHERE e.event = 'hard_bounce')::int AS hard_bounce,
               count(e.id) FILTER (WHERE e.event = 'soft_bounce')::int AS soft_bounce,
               count(e.id) FILTER (WHERE e.event = 'out_of_band')::int AS out_of_band,
               count(e.id) FILTER (WHERE e.event IN ('spam', 'spam_complaint'))::int AS spam
        FROM page p LEFT JOIN events e ON e.message_id = p.id ${since}
        GROUP BY p.id, p.email
        ORDER BY p.id`,
  )
  const total = await queryOne<{ n: number }>(
    ex,
    sql`SELECT count(*)::int AS n FROM messages m WHERE ${where}`,
  )
  return { rows, total: total?.n ?? 0 }
}
