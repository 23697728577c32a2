import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'

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
