import { sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import type { DetailEvent } from './scope-stats.schemas.js'

/**
 * What a statistic counts: one campaign's mail, or an automation's (all its mail nodes, or one of them).
 * Campaign ids and pipeline ids are each of one account, so a scope never spans two.
 */
export type StatsScope = { campaignId: number } | { pipelineId: number; actionId?: string }

/** The scope's rows of `messages` aliased `m`. */
export const scopeMessages = (scope: StatsScope): SQL =>
  'campaignId' in scope
    ? sql`m.campaign_id = ${scope.campaignId}::int`
    : sql`m.pipeline_id = ${scope.pipelineId}::int${scope.actionId !== undefined ? sql` AND m.action_id = ${scope.actionId}::text` : sql``}`

/**
 * Purchases by the scope's recipients (same account and address) from their first click on one of its mails
 * up to seven days later (contract §5); a purchase inside the windows of two mails counts once. Driven from the
 * clicked mail (`messages_campaign_clicked_idx` / `messages_pipeline_idx`) into
 * `transactions_account_email_idx`, so the cost follows the scope's clicks, not the account's purchases.
 */
export async function scopeConversions(
  ex: Executor,
  scope: StatsScope,
): Promise<{ conversions: number; value: number }> {
  const row = await queryOne<{ n: number; value: string }>(
    ex,
    // Amounts are numeric and summed as decimals (binary floats would show 0.30000000000000004); the exact
    // decimal text becomes the JSON number.
    // The scope's account is read once (every mail of a scope is of one account), so the clicked mail is read
    // from the index alone (`messages_campaign_clicked_idx` carries no account).
    sql`SELECT count(*)::int AS n, coalesce(sum(t.amount), 0)::text AS value
        FROM transactions t
        WHERE t.id IN (
          SELECT tw.id FROM messages m
          JOIN transactions tw
            ON tw.account_id = (SELECT m.account_id FROM messages m WHERE ${scopeMessages(scope)} LIMIT 1)
            AND tw.email = m.email
            AND tw.occurred_at >= m.first_click_at
            AND tw.occurred_at <= m.first_click_at + interval '7 days'
          WHERE ${scopeMessages(scope)} AND m.first_click_at IS NOT NULL)`,
  )
  return { conversions: Number(row?.n ?? 0), value: Number(row?.value ?? 0) }
}

export interface DetailFilter {
  email?: string | undefined
  /** Only these recipients (normalized addresses). */
  emails?: string[] | undefined
  event?: DetailEvent | undefined
  /** Only events from this instant on are counted (and looked for by `event`). */
  from?: Date | undefined
}

export type DetailRow = { email: string } & Record<DetailEvent, number>

/** `spam` on the wire is either spelling of a complaint in `events`. */
const eventsOf = (e: DetailEvent): string[] => (e === 'spam' ? ['spam', 'spam_complaint'] : [e])

/**
 * One page of the scope's recipients (addresses of its mail rows, rows skipped as suppressed excluded, in the
 * order of their first mail) with the count of each of their events over all the scope's mail to them, and
 * how many recipients match. A campaign has one row per recipient (`oneRowPerAddress`): its page is read in
 * ledger order with no grouping, so a page of a million-recipient campaign costs a page.
 */
export async function scopeDetailPage(
  ex: Executor,
  scope: StatsScope,
  filter: DetailFilter,
  limit: number,
  offset: number,
): Promise<{ rows: DetailRow[]; total: number }> {
  const oneRowPerAddress = 'campaignId' in scope
  const since = filter.from ? sql`AND e.occurred_at >= ${filter.from.toISOString()}::timestamptz` : sql``
  const mailOf = sql`${scopeMessages(scope)} AND m.status <> 3`
  const byEmail = sql.join(
    [
      filter.email !== undefined ? sql`AND m.email = ${filter.email}::text` : sql``,
      filter.emails !== undefined
        ? sql`AND m.email IN (SELECT jsonb_array_elements_text(${JSON.stringify(filter.emails)}::jsonb))`
        : sql``,
    ],
    sql` `,
  )
  const hasEvent = filter.event
    ? sql`EXISTS (SELECT 1 FROM events e WHERE e.message_id = m.id
            AND e.event IN (SELECT jsonb_array_elements_text(${JSON.stringify(eventsOf(filter.event))}::jsonb))
            ${since})`
    : undefined
  const recipients = oneRowPerAddress
    ? sql`SELECT m.email, m.id AS first_id FROM messages m
        WHERE ${mailOf} ${byEmail} ${hasEvent ? sql`AND ${hasEvent}` : sql``}`
    : sql`SELECT m.email, min(m.id) AS first_id FROM messages m
        WHERE ${mailOf} ${byEmail} GROUP BY m.email ${hasEvent ? sql`HAVING bool_or(${hasEvent})` : sql``}`
  const rows = await queryRows<DetailRow>(
    ex,
    sql`WITH page AS (${recipients} ORDER BY first_id LIMIT ${limit} OFFSET ${offset})
        SELECT p.email,
               count(e.id) FILTER (WHERE e.event = 'open')::int AS open,
               count(e.id) FILTER (WHERE e.event = 'send')::int AS send,
               count(e.id) FILTER (WHERE e.event = 'click')::int AS click,
               count(e.id) FILTER (WHERE e.event = 'unsub')::int AS unsub,
               count(e.id) FILTER (WHERE e.event = 'hard_bounce')::int AS hard_bounce,
               count(e.id) FILTER (WHERE e.event = 'soft_bounce')::int AS soft_bounce,
               count(e.id) FILTER (WHERE e.event = 'out_of_band')::int AS out_of_band,
               count(e.id) FILTER (WHERE e.event IN ('spam', 'spam_complaint'))::int AS spam
        FROM page p
        JOIN messages m ON ${oneRowPerAddress ? sql`m.id = p.first_id` : sql`${mailOf} AND m.email = p.email`}
        LEFT JOIN events e ON e.message_id = m.id ${since}
        GROUP BY p.email, p.first_id
        ORDER BY p.first_id`,
  )
  const total = await queryOne<{ n: number }>(ex, sql`SELECT count(*)::int AS n FROM (${recipients}) r`)
  return { rows, total: total?.n ?? 0 }
}
