import { sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import { ts } from './runs.repo.js'

/** The SQL of the yearly date trigger (triggers.ts, createDateScanner): its pipelines, its runs, its days. */

export interface DatePipeline {
  id: number
  accountId: number
  listId: number
  version: number
  start: string
  reentry: string
  field: string
}

/** Active, not deleted pipelines of every account with a date trigger. */
export async function datePipelines(ex: Executor): Promise<DatePipeline[]> {
  return queryRows<DatePipeline>(
    ex,
    sql`SELECT id, account_id AS "accountId", list_id AS "listId", version, start, reentry,
               trigger ->> 'field' AS field
        FROM pipelines
        WHERE status = 'active' AND deleted_at IS NULL AND trigger ->> 'type' = 'date'
          AND coalesce(trigger ->> 'field', '') <> ''`,
  )
}

/**
 * Takes the pipeline's scan until commit, and gives the last day it was scanned (`YYYY-MM-DD`; undefined for
 * one never scanned). Two workers scanning the same day would both pass startDateRuns' NOT EXISTS (neither sees
 * the other's uncommitted rows) and start every run twice: one scan per pipeline at a time.
 */
export async function lockDateScan(ex: Executor, pipelineId: number): Promise<string | undefined> {
  await ex.execute(sql`SELECT pg_advisory_xact_lock(${AUTOMATION_DATE_SCAN_LOCK}::int, ${pipelineId}::int)`)
  const row = await queryOne<{ day: string }>(
    ex,
    sql`SELECT scanned_on AS day FROM automation_date_scans WHERE pipeline_id = ${pipelineId}`,
  )
  return row?.day
}

/** Side effect: the pipeline was scanned on `day`. */
export async function markDateScanned(ex: Executor, pipelineId: number, day: string): Promise<void> {
  await ex.execute(
    sql`INSERT INTO automation_date_scans (pipeline_id, scanned_on) VALUES (${pipelineId}, ${day})
        ON CONFLICT (pipeline_id) DO UPDATE SET scanned_on = excluded.scanned_on`,
  )
}

/** The date field's month-day as `MM-DD` (birthday `YYYY-MM-DD`, nameday `MM-DD`, or a custom field). */
function monthDayOf(field: string): SQL {
  if (field === 'birthday') return sql`right(c.birthday, 5)`
  if (field === 'nameday') return sql`right(c.nameday, 5)`
  // A typed custom field is stored as {value, type}; a plain one as its value.
  return sql`right(coalesce(c.custom_fields -> ${field} ->> 'value', c.custom_fields ->> ${field}), 5)`
}

/** Which members a scan of one day looks at. */
export interface DateScanDay {
  /** The month-days (`MM-DD`) whose dates fall on the day (triggers.ts, monthDaysOn). */
  monthDays: readonly string[]
  /** The start of the day's year: a member with a date run of the pipeline since then has had this year's. */
  yearStart: Date
  /**
   * For a day scanned late (the worker was down): only members subscribed before it ended, so nobody who
   * joined after their date is greeted for it.
   */
  subscribedBefore?: Date
}

/**
 * Side effect: starts a run of a date pipeline for every subscribed member whose date field falls on the day and
 * who has no date run of it since the day's year began (once per pipeline, contact and year; `once` re-entry:
 * never a second run at all). One statement; how many runs it started. Called under lockDateScan.
 */
export async function startDateRuns(
  ex: Executor,
  p: DatePipeline,
  day: DateScanDay,
  now: Date,
): Promise<number> {
  const rows = await queryRows<{ id: string | number }>(
    ex,
    sql`INSERT INTO automation_runs (account_id, pipeline_id, pipeline_version, contact_id, email, trigger_kind,
                                     status, node_id, due_at, state, started_at)
        SELECT ${p.accountId}, ${p.id}, ${p.version}, c.id, c.email, 'date', 'active', ${p.start}, ${ts(now)},
               '{}'::jsonb, ${ts(now)}
        FROM memberships m JOIN contacts c ON c.id = m.contact_id
        WHERE m.list_id = ${p.listId} AND m.status = 1 AND ${monthDayOf(p.field)} IN (${sql.join(
          day.monthDays.map((d) => sql`${d}`),
          sql`, `,
        )})
          ${day.subscribedBefore ? sql`AND m.subscribed_at < ${ts(day.subscribedBefore)}` : sql``}
          AND NOT EXISTS (SELECT 1 FROM automation_runs r WHERE r.pipeline_id = ${p.id} AND r.contact_id = c.id
                            AND (${p.reentry} = 'once' OR (r.trigger_kind = 'date' AND r.started_at >= ${ts(day.yearStart)})))
        RETURNING id`,
  )
  return rows.length
}

/** The first key of lockDateScan's advisory locks (the second is the pipeline id). */
const AUTOMATION_DATE_SCAN_LOCK = 1_302_114
