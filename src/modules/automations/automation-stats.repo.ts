import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import { COUNTER_NAMES, type Counters } from '../events/index.js'
import type { DetailEvent } from './automation-stats.schemas.js'

/**
 * SQL of the automation statistics (contract §5, as campaign statistics define them). Automation-specific
 * because the scope differs: a pipeline's figures are the sum over all its mail nodes (stat_counters rows of
 * campaign 0, the pipeline and any action id), and one address may get many mails of one pipeline (several
 * mail nodes, repeated runs), so stats-detail groups by address where campaigns have one row per recipient.
 */

/** The summed counters of every mail node of the pipeline (primary-key prefix of `stat_counters`). */
export async function pipelineCounters(ex: Executor, pipelineId: number): Promise<Counters> {
  const sums = sql.raw(COUNTER_NAMES.map((n) => `coalesce(sum("${n}"), 0)::float8 AS "${n}"`).join(', '))
  const row = await queryOne<Counters>(
    ex,
    sql`SELECT ${sums} FROM stat_counters WHERE campaign_id = 0 AND pipeline_id = ${pipelineId}::int`,
  )
  const out = {} as Counters
  for (const n of COUNTER_NAMES) out[n] = Number(row?.[n] ?? 0)
  return out
}

/** `triggered`: runs started; `ended`: runs that reached an end (`automation_runs_pipeline_idx`). */
export async function pipelineRunCounts(
  ex: Executor,
  pipelineId: number,
): Promise<{ triggered: number; ended: number }> {
  const row = await queryOne<{ triggered: number; ended: number }>(
    ex,
    sql`SELECT count(*)::int AS triggered, count(*) FILTER (WHERE status = 'ended')::int AS ended
        FROM automation_runs WHERE pipeline_id = ${pipelineId}::int`,
  )
  return { triggered: Number(row?.triggered ?? 0), ended: Number(row?.ended ?? 0) }
}

/**
 * Purchases by the pipeline's recipients (same account and address) from the first click on one of its
 * mails up to seven days later; a purchase inside the windows of two mails counts once. Driven from the
 * clicked mail (`messages_pipeline_idx`) into `transactions_account_email_idx`, so the cost follows the
 * pipeline's clicks, not the account's purchases.
 */
export async function pipelineConversions(
  ex: Executor,
  accountId: number,
  pipelineId: number,
): Promise<{ conversions: number; value: number }> {
  const row = await queryOne<{ n: number; value: string }>(
    ex,
    // Summed as decimals, as campaign conversions are; the exact decimal text becomes the JSON number.
    sql`SELECT count(*)::int AS n, coalesce(sum(t.amount), 0)::text AS value
        FROM transactions t
        WHERE t.id IN (
          SELECT tw.id FROM messages m
          JOIN transactions tw ON tw.account_id = m.account_id AND tw.email = m.email
            AND tw.occurred_at >= m.first_click_at
            AND tw.occurred_at <= m.first_click_at + interval '7 days'
          WHERE m.pipeline_id = ${pipelineId}::int AND m.account_id = ${accountId}::int
            AND m.first_click_at IS NOT NULL)`,
  )
  return { conversions: Number(row?.n ?? 0), value: Number(row?.value ?? 0) }
}

/**
 * Within [from, to) (an open side unbounded): mails with an open, mails with a click (unique, as `open` and
 * `click` are), and `send` events (mails injected). One range scan of `events_pipeline_idx` per event type.
 */
export async function pipelineRangeCounts(
  ex: Executor,
  pipelineId: number,
  from: Date | undefined,
  to: Date | undefined,
): Promise<{ open: number; click: number; inject: number }> {
  const lower = from ? sql`AND occurred_at >= ${from.toISOString()}::timestamptz` : sql``
  const upper = to ? sql`AND occurred_at < ${to.toISOString()}::timestamptz` : sql``
  const count = (event: string, what: 'messages' | 'events') =>
    sql`(SELECT ${what === 'messages' ? sql`count(DISTINCT message_id)` : sql`count(*)`}::int FROM events
         WHERE pipeline_id = ${pipelineId}::int AND event = ${event}::text ${lower} ${upper})`
  const row = await queryOne<{ open: number; click: number; inject: number }>(
    ex,
    sql`SELECT ${count('open', 'messages')} AS open, ${count('click', 'messages')} AS click,
               ${count('send', 'events')} AS inject`,
  )
  return { open: Number(row?.open ?? 0), click: Number(row?.click ?? 0), inject: Number(row?.inject ?? 0) }
}

export interface PipelineDetailFilter {
  email?: string | undefined
  event?: DetailEvent | undefined
  /** Only events from this instant on are counted (and looked for by `event`). */
  from?: Date | undefined
}

export type PipelineDetailRow = { email: string } & Record<DetailEvent, number>

/** `spam` on the wire is either spelling of a complaint in `events`. */
const eventsOf = (e: DetailEvent): string[] => (e === 'spam' ? ['spam', 'spam_complaint'] : [e])

/**
 * One page of the pipeline's recipients (addresses of its mail rows, skipped ones excluded, in the order of
 * their first mail) with the count of each of their events over all the pipeline's mail to them, and how
 * many recipients match.
 */
export async function pipelineDetailPage(
  ex: Executor,
  accountId: number,
  pipelineId: number,
  filter: PipelineDetailFilter,
  limit: number,
  offset: number,
): Promise<{ rows: PipelineDetailRow[]; total: number }> {
  const since = filter.from ? sql`AND e.occurred_at >= ${filter.from.toISOString()}::timestamptz` : sql``
  const mailOf = sql`m.pipeline_id = ${pipelineId}::int AND m.account_id = ${accountId}::int AND m.status <> 3`
  const byEmail = filter.email !== undefined ? sql`AND m.email = ${filter.email}::text` : sql``
  const having = filter.event
    ? sql`HAVING bool_or(EXISTS (SELECT 1 FROM events e WHERE e.message_id = m.id
            AND e.event IN (SELECT jsonb_array_elements_text(${JSON.stringify(eventsOf(filter.event))}::jsonb))
            ${since}))`
    : sql``
  const recipients = sql`SELECT m.email, min(m.id) AS first_id FROM messages m
      WHERE ${mailOf} ${byEmail} GROUP BY m.email ${having}`
  const rows = await queryRows<PipelineDetailRow>(
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
        JOIN messages m ON ${mailOf} AND m.email = p.email
        LEFT JOIN events e ON e.message_id = m.id ${since}
        GROUP BY p.email, p.first_id
        ORDER BY p.first_id`,
  )
  const total = await queryOne<{ n: number }>(ex, sql`SELECT count(*)::int AS n FROM (${recipients}) r`)
  return { rows, total: total?.n ?? 0 }
}
