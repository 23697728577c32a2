import { sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import type { RunStatus } from './automations.table.js'

/** The SQL of the engine's runs and log: claiming due runs, moving them, writing log entries, starting runs. */

export const ts = (d: Date) => sql`${d.toISOString()}::timestamptz`
/** A list of ids as one parameter on every driver (PGlite and pg take JS arrays differently). */
export const idsOf = (ids: readonly number[]): SQL =>
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
  /** The trigger's first run (this run's id unless it is a branch): the log's trigger_id. */
  rootId: number
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
  root_id: string | number
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
  rootId: Number(r.root_id),
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
                  (extract(epoch FROM r.due_at) * 1000)::bigint AS due_ms,
                  coalesce(r.root_run_id, r.id) AS root_id`,
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

/**
 * The account's contact of `email` and its status in `listId`; undefined when it is no member. Runs start only
 * for status 1; the status tells a caller why none started.
 */
export async function listMember(
  ex: Executor,
  accountId: number,
  listId: number,
  email: string,
): Promise<{ id: number; status: number } | undefined> {
  return queryOne<{ id: number; status: number }>(
    ex,
    sql`SELECT c.id, m.status FROM contacts c
        JOIN memberships m ON m.contact_id = c.id AND m.list_id = ${listId}
        WHERE c.account_id = ${accountId} AND c.email = ${email}`,
  )
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
  /** The run's state to begin with (run-chain.ts: the chain it is in). */
  state?: Record<string, unknown>
}

/** Side effect: a new active run at the pipeline's first node, due now; its id. */
export async function insertRun(ex: Executor, r: NewRun): Promise<number> {
  const row = await queryOne<{ id: string | number }>(
    ex,
    sql`INSERT INTO automation_runs (account_id, pipeline_id, pipeline_version, contact_id, email, trigger_kind,
                                     status, node_id, due_at, state, started_at)
        VALUES (${r.accountId}, ${r.pipelineId}, ${r.pipelineVersion}, ${r.contactId}, ${r.email},
                ${r.triggerKind}, 'active', ${r.nodeId}, ${ts(r.now)}, ${JSON.stringify(r.state ?? {})}::jsonb, ${ts(r.now)})
        RETURNING id`,
  )
  return Number(row!.id)
}

/**
 * Side effect (GDPR erasure): the address becomes `pseudonym` on the account's automation runs and log entries,
 * as it does in the mail and event logs, and the runs still active stop (end reason `erased`), so nothing more
 * executes for the person. A run being executed meanwhile is row-locked: this waits for its node and then stops it.
 */
export async function pseudonymiseRuns(
  ex: Executor,
  accountId: number,
  email: string,
  pseudonym: string,
  now: Date,
): Promise<void> {
  await ex.execute(
    sql`UPDATE automation_runs SET email = ${pseudonym},
          end_reason = CASE WHEN status = 'active' THEN 'erased' ELSE end_reason END,
          ended_at = CASE WHEN status = 'active' THEN ${ts(now)} ELSE ended_at END,
          due_at = CASE WHEN status = 'active' THEN NULL ELSE due_at END,
          status = CASE WHEN status = 'active' THEN 'stopped' ELSE status END,
          claimed_until = NULL
        WHERE account_id = ${accountId}::int AND email = ${email}`,
  )
  await ex.execute(
    sql`UPDATE automation_log SET email = ${pseudonym} WHERE account_id = ${accountId}::int AND email = ${email}`,
  )
}

export interface NewBranch {
  /** The run that forked. */
  parentId: number
  nodeId: string
  dueAt: Date
  state: Record<string, unknown>
}

/**
 * Side effect: one new active run per branch, a copy of its parent (subscriber, trigger, start time) at the
 * branch's node; every branch names the trigger's first run (`root_run_id`). One statement.
 */
export async function insertBranches(ex: Executor, branches: readonly NewBranch[]): Promise<void> {
  if (branches.length === 0) return
  const rows = branches.map((b) => ({
    parent_id: b.parentId,
    node_id: b.nodeId,
    due_at: b.dueAt.toISOString(),
    state: b.state,
  }))
  await ex.execute(
    sql`INSERT INTO automation_runs (account_id, pipeline_id, pipeline_version, contact_id, email, trigger_kind,
                                     status, node_id, due_at, state, started_at, root_run_id)
        SELECT p.account_id, p.pipeline_id, p.pipeline_version, p.contact_id, p.email, p.trigger_kind, 'active',
               x.node_id, x.due_at, x.state, p.started_at, coalesce(p.root_run_id, p.id)
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS x(parent_id bigint, node_id text, due_at timestamptz, state jsonb)
        JOIN automation_runs p ON p.id = x.parent_id`,
  )
}

/** The trigger's runs (its first run and every branch) among `roots`; `automation_runs_root_idx`. */
const ofTriggers = (roots: readonly number[]) =>
  sql`(id IN ${idsOf(roots)} OR root_run_id IN ${idsOf(roots)})`

/** How many runs of each trigger in `roots` are active (branches count). */
export async function activeBranches(ex: Executor, roots: readonly number[]): Promise<Map<number, number>> {
  if (roots.length === 0) return new Map()
  const rows = await queryRows<{ root: string | number; n: number }>(
    ex,
    sql`SELECT coalesce(root_run_id, id) AS root, count(*)::int AS n FROM automation_runs
        WHERE ${ofTriggers(roots)} AND status = 'active' GROUP BY 1`,
  )
  return new Map(rows.map((r) => [Number(r.root), r.n]))
}

export interface BranchGoals {
  id: number
  root: number
  /** Where it is while active; null once it ended or stopped. */
  activeAt: string | null
  /** The goal nodes whose condition it met. */
  met: string[]
}

/** Every run of the triggers in `roots`, where it is and which goals it met (branched runs' goal rules). */
export async function branchGoals(ex: Executor, roots: readonly number[]): Promise<BranchGoals[]> {
  if (roots.length === 0) return []
  const rows = await queryRows<{
    id: string | number
    root: string | number
    at: string | null
    met: unknown
  }>(
    ex,
    sql`SELECT id, coalesce(root_run_id, id) AS root, CASE WHEN status = 'active' THEN node_id END AS at,
               coalesce(state -> 'goalsMet', '[]'::jsonb) AS met
        FROM automation_runs WHERE ${ofTriggers(roots)}`,
  )
  return rows.map((r) => {
    const met = typeof r.met === 'string' ? (JSON.parse(r.met) as unknown) : r.met
    return {
      id: Number(r.id),
      root: Number(r.root),
      activeAt: r.at,
      met: Array.isArray(met) ? met.map(String) : [],
    }
  })
}

/**
 * Side effect: serialises, until commit, the goal jumps of branches of the triggers in `roots` (two branches
 * of one trigger meeting a goal at once jump once). Taken in id order, so two transactions cannot wait on
 * each other.
 */
export async function lockTriggers(ex: Executor, roots: readonly number[]): Promise<void> {
  if (roots.length === 0) return
  const sorted = [...new Set(roots)].sort((a, b) => a - b)
  await ex.execute(
    sql`SELECT pg_advisory_xact_lock(${AUTOMATION_TRIGGER_LOCK}::int, (r.id % 2147483647)::int)
        FROM ${idsOf(sorted)} AS r(id) ORDER BY r.id`,
  )
}

/** The first key of lockTriggers' advisory locks (the second is the trigger's run id). */
const AUTOMATION_TRIGGER_LOCK = 1_302_113
