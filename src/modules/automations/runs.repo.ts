import { sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import type { RunStatus } from './automations.table.js'

/** The SQL of the engine's runs and log: claiming due runs, moving them, writing log entries, starting runs. */

const ts = (d: Date) => sql`${d.toISOString()}::timestamptz`
/** A list of ids as one parameter on every driver (PGlite and pg take JS arrays differently). */
const idsOf = (ids: readonly number[]): SQL =>
  sql`(SELECT (jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))::bigint)`

export interface ClaimedRun {
  id: number
  accountId: number
  pipelineId: number
  pipelineVersion: number
  contactId: number | null
  email: string
  nodeId: string
  state: Record<string, unknown>
  startedAt: Date
  dueAt: Date
}

interface RunRowRaw {
  id: string | number
  account_id: number
  pipeline_id: number
  pipeline_version: number
  contact_id: number | null
  email: string
  node_id: string
  state: Record<string, unknown> | string
  started_ms: string | number
  due_ms: string | number
}

const toRun = (r: RunRowRaw): ClaimedRun => ({
  id: Number(r.id),
  accountId: r.account_id,
  pipelineId: r.pipeline_id,
  pipelineVersion: r.pipeline_version,
  contactId: r.contact_id,
  email: r.email,
  nodeId: r.node_id,
  state: typeof r.state === 'string' ? (JSON.parse(r.state) as Record<string, unknown>) : r.state,
  startedAt: new Date(Number(r.started_ms)),
  dueAt: new Date(Number(r.due_ms)),
})

/**
 * Side effect: leases up to `limit` due active runs to the caller until `lease` (oldest due first). Runs of a
 * paused pipeline are left where they are; a run whose lease ran out (its worker died) is due again. The
 * lease value is the claim's token: the transaction that executes the node only touches runs still holding it.
 */
export async function claimDueRuns(
  ex: Executor,
  now: Date,
  lease: Date,
  limit: number,
): Promise<ClaimedRun[]> {
  const rows = await queryRows<RunRowRaw>(
    ex,
    sql`UPDATE automation_runs r SET claimed_until = ${ts(lease)}
        FROM (SELECT r2.id FROM automation_runs r2
              JOIN pipelines p ON p.id = r2.pipeline_id
              WHERE r2.status = 'active' AND r2.due_at <= ${ts(now)}
                AND (r2.claimed_until IS NULL OR r2.claimed_until <= ${ts(now)})
                AND NOT (p.status = 'paused' AND p.deleted_at IS NULL)
              ORDER BY r2.due_at, r2.id
              LIMIT ${limit}
              FOR UPDATE OF r2 SKIP LOCKED) c
        WHERE r.id = c.id
        RETURNING r.id, r.account_id, r.pipeline_id, r.pipeline_version, r.contact_id, r.email, r.node_id,
                  r.state, (extract(epoch FROM r.started_at) * 1000)::bigint AS started_ms,
                  (extract(epoch FROM r.due_at) * 1000)::bigint AS due_ms`,
  )
  return rows.map(toRun).sort((a, b) => a.id - b.id)
}

/** Row-locks the runs of `ids` that still hold this claim (`lease`); the ids of those. */
export async function lockClaimed(ex: Executor, ids: readonly number[], lease: Date): Promise<Set<number>> {
  const rows = await queryRows<{ id: string | number }>(
    ex,
    sql`SELECT id FROM automation_runs
        WHERE id IN ${idsOf(ids)} AND status = 'active' AND claimed_until = ${ts(lease)}
        FOR UPDATE`,
  )
  return new Set(rows.map((r) => Number(r.id)))
}

export interface LogEntry {
  accountId: number
  pipelineId: number
  runId: number
  actionId: string
  email: string
  props: Record<string, unknown>
  next: string[] | null
}

/** Side effect: one automation-log entry per executed node, in one statement. */
export async function insertLogEntries(ex: Executor, entries: readonly LogEntry[], now: Date): Promise<void> {
  if (entries.length === 0) return
  const rows = entries.map((e) => ({
    account_id: e.accountId,
    pipeline_id: e.pipelineId,
    run_id: e.runId,
    action_id: e.actionId,
    email: e.email,
    props: e.props,
    next: e.next,
  }))
  await ex.execute(
    sql`INSERT INTO automation_log (account_id, pipeline_id, run_id, action_id, email, props, next, created_at)
        SELECT x.account_id, x.pipeline_id, x.run_id, x.action_id, x.email, coalesce(x.props, '{}'::jsonb), x.next,
               ${ts(now)}
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS x(account_id int, pipeline_id int, run_id bigint, action_id text, email text, props jsonb, next jsonb)`,
  )
}

export interface RunMove {
  id: number
  nodeId: string | null
  dueAt: Date | null
  status: RunStatus
  state: Record<string, unknown>
  version: number
  endReason: string | null
}

/** Side effect: moves runs on (next node and due time, or ended/stopped) and releases their claim, in one statement. */
export async function moveRuns(ex: Executor, moves: readonly RunMove[], now: Date): Promise<void> {
  if (moves.length === 0) return
  const rows = moves.map((m) => ({
    id: m.id,
    node_id: m.nodeId,
    due_at: m.dueAt?.toISOString() ?? null,
    status: m.status,
    state: m.state,
    version: m.version,
    end_reason: m.endReason,
  }))
  await ex.execute(
    sql`UPDATE automation_runs r SET
          node_id = x.node_id, due_at = x.due_at, status = x.status, state = coalesce(x.state, '{}'::jsonb),
          pipeline_version = x.version, claimed_until = NULL, end_reason = x.end_reason,
          ended_at = CASE WHEN x.status = 'active' THEN NULL ELSE ${ts(now)} END
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS x(id bigint, node_id text, due_at timestamptz, status text, state jsonb, version int, end_reason text)
        WHERE r.id = x.id`,
  )
}

/** The contact id of `email` when it is subscribed (status 1) to `listId` of the account. */
export async function subscribedContact(
  ex: Executor,
  accountId: number,
  listId: number,
  email: string,
): Promise<number | undefined> {
  const row = await queryOne<{ id: number }>(
    ex,
    sql`SELECT c.id FROM contacts c
        JOIN memberships m ON m.contact_id = c.id AND m.list_id = ${listId}
        WHERE c.account_id = ${accountId} AND c.email = ${email} AND m.status = 1`,
  )
  return row?.id
}

/**
 * Serialises run starts of one pipeline for one contact until commit, so two triggers at once cannot both
 * pass the `once` check.
 */
export async function lockPipelineContact(
  ex: Executor,
  pipelineId: number,
  contactId: number,
): Promise<void> {
  await ex.execute(sql`SELECT pg_advisory_xact_lock(${pipelineId}::int, ${contactId}::int)`)
}

/** Any run of the pipeline for the contact (the `once` re-entry rule); its id. */
export async function anyRunOf(
  ex: Executor,
  pipelineId: number,
  contactId: number,
): Promise<number | undefined> {
  const row = await queryOne<{ id: string | number }>(
    ex,
    sql`SELECT id FROM automation_runs WHERE pipeline_id = ${pipelineId} AND contact_id = ${contactId}
        ORDER BY id LIMIT 1`,
  )
  return row ? Number(row.id) : undefined
}

export interface NewRun {
  accountId: number
  pipelineId: number
  pipelineVersion: number
  contactId: number
  email: string
  triggerKind: string
  nodeId: string
  now: Date
}

/** Side effect: a new active run at the pipeline's first node, due now; its id. */
export async function insertRun(ex: Executor, r: NewRun): Promise<number> {
  const row = await queryOne<{ id: string | number }>(
    ex,
    sql`INSERT INTO automation_runs (account_id, pipeline_id, pipeline_version, contact_id, email, trigger_kind,
                                     status, node_id, due_at, state, started_at)
        VALUES (${r.accountId}, ${r.pipelineId}, ${r.pipelineVersion}, ${r.contactId}, ${r.email},
                ${r.triggerKind}, 'active', ${r.nodeId}, ${ts(r.now)}, '{}'::jsonb, ${ts(r.now)})
        RETURNING id`,
  )
  return Number(row!.id)
}

export interface DatePipeline {
  id: number
  accountId: number
  listId: number
  version: number
  start: string
  reentry: string
  field: string
}

/** The date field's month-day as `MM-DD` (birthday `YYYY-MM-DD`, nameday `MM-DD`, or a custom field). */
function monthDayOf(field: string): SQL {
  if (field === 'birthday') return sql`right(c.birthday, 5)`
  if (field === 'nameday') return sql`right(c.nameday, 5)`
  // A typed custom field is stored as {value, type}; a plain one as its value.
  return sql`right(coalesce(c.custom_fields -> ${field} ->> 'value', c.custom_fields ->> ${field}), 5)`
}

/**
 * Side effect: starts a run of a date pipeline for every subscribed member whose date field falls on
 * `monthDay` and who has no date run of it since `yearStart` (once per pipeline, contact and year; `once`
 * re-entry: never a second run at all). One statement per pipeline; how many runs it started.
 */
export async function startDateRuns(
  ex: Executor,
  p: DatePipeline,
  monthDay: string,
  yearStart: Date,
  now: Date,
): Promise<number> {
  const rows = await queryRows<{ id: string | number }>(
    ex,
    sql`INSERT INTO automation_runs (account_id, pipeline_id, pipeline_version, contact_id, email, trigger_kind,
                                     status, node_id, due_at, state, started_at)
        SELECT ${p.accountId}, ${p.id}, ${p.version}, c.id, c.email, 'date', 'active', ${p.start}, ${ts(now)},
               '{}'::jsonb, ${ts(now)}
        FROM memberships m JOIN contacts c ON c.id = m.contact_id
        WHERE m.list_id = ${p.listId} AND m.status = 1 AND ${monthDayOf(p.field)} = ${monthDay}
          AND NOT EXISTS (SELECT 1 FROM automation_runs r WHERE r.pipeline_id = ${p.id} AND r.contact_id = c.id
                            AND (${p.reentry} = 'once' OR (r.trigger_kind = 'date' AND r.started_at >= ${ts(yearStart)})))
        RETURNING id`,
  )
  return rows.length
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
