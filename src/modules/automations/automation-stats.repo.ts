import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'

/**
 * SQL of the automation statistics that only automations have (runs, and figures within a date range); the
 * counters, conversions and stats-detail of a pipeline scope are read by the events module (scope-stats.repo.ts),
 * as a campaign's are.
 */

/**
 * `triggered`: runs started, counting a trigger once however many branches it forked into (branches name the
 * trigger's first run in `root_run_id`); `ended`: triggers all of whose runs reached an end
 * (`automation_runs_pipeline_idx`, and `automation_runs_root_idx` for the branches of ended ones).
 */
export async function pipelineRunCounts(
  ex: Executor,
  pipelineId: number,
): Promise<{ triggered: number; ended: number }> {
  const row = await queryOne<{ triggered: number; ended: number }>(
    ex,
    sql`SELECT count(*)::int AS triggered,
               count(*) FILTER (WHERE r.status = 'ended' AND NOT EXISTS (
                 SELECT 1 FROM automation_runs b WHERE b.root_run_id = r.id AND b.status <> 'ended'))::int AS ended
        FROM automation_runs r WHERE r.pipeline_id = ${pipelineId}::int AND r.root_run_id IS NULL`,
  )
  return { triggered: Number(row?.triggered ?? 0), ended: Number(row?.ended ?? 0) }
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
