import { sql, type SQL } from 'drizzle-orm'
import { DAY_MS } from '../../core/clock.js'
import type { Executor } from '../../core/db/client.js'
import { queryRows } from '../../core/db/sql.js'
import { conditionSql, type Condition as SegmentCondition } from '../segments/index.js'

/**
 * SQL of the automation condition evaluator (conditions.ts): a condition becomes one SQL boolean over the
 * subject's contact row `c` (LEFT JOINed: a run whose address is no contact still evaluates), so one check
 * costs one statement. Field, tag and list leaves are compiled by the segments compiler, so a segment and a
 * check node with the same condition agree on every contact; the leaves that belong to a run (opened /
 * clicked this run's mail), the purchase window of the engine's clock and tracker events with an optional
 * category are written here.
 */

/** What the run-scoped leaves need to know; the caller has normalised it (conditions.ts). */
export interface ConditionScope {
  accountId: number
  runId: number
  contactId: number | null
  /** Trimmed and lower-cased, as contacts, messages and transactions store addresses. */
  email: string
  now: Date
}

/** One run of a batch: the per-run part of a ConditionScope. */
export type BatchSubject = Pick<ConditionScope, 'runId' | 'contactId' | 'email'>

/**
 * The scope as the SQL sees it: the per-run values are SQL expressions, parameters for one subject or columns
 * of the subjects' row set for a batch, so one compiler serves both.
 */
interface SqlScope {
  accountId: number
  now: Date
  runId: SQL
  email: SQL
}

/** A condition leaf in the shape the SQL below takes (conditions.ts turns stored JSON into these). */
export type CompiledLeaf =
  | { kind: 'segment'; condition: SegmentCondition }
  | { kind: 'mail'; column: 'first_open_at' | 'first_click_at'; nodeId: string }
  | { kind: 'purchased'; days: number }
  | { kind: 'event'; category?: string | undefined; action?: string | undefined }
  | { kind: 'constant'; value: boolean }

export type CompiledCondition =
  | { all: CompiledCondition[] }
  | { any: CompiledCondition[] }
  | { not: CompiledCondition }
  | { leaf: CompiledLeaf }

const definite = (expr: SQL) => sql`coalesce(${expr}, false)`

/**
 * This run's mail from node `nodeId` reached the milestone: the message the engine recorded for the node in
 * the run's state (`state.mail[nodeId]`, a primary-key probe; branches carry their parent's). A run that did not
 * send that node's mail (it never passed the node, or the node failed) has none: no guess by address, which took
 * the mail of another run of the same person in a repeating pipeline.
 */
function mailReached(leaf: Extract<CompiledLeaf, { kind: 'mail' }>, s: SqlScope): SQL {
  const column = sql.identifier(leaf.column)
  const recorded = sql`(SELECT ar.state -> 'mail' ->> ${leaf.nodeId}::text FROM automation_runs ar
      WHERE ar.id = ${s.runId})`
  return sql`EXISTS (SELECT 1 FROM messages am
        WHERE am.id = (CASE WHEN ${recorded} ~ '^[0-9]{1,18}$' THEN ${recorded}::bigint END)
          AND am.${column} IS NOT NULL)`
}

function leafSql(leaf: CompiledLeaf, s: SqlScope): SQL {
  switch (leaf.kind) {
    case 'segment':
      return definite(conditionSql(leaf.condition, { accountId: s.accountId, now: s.now }))
    case 'mail':
      return mailReached(leaf, s)
    case 'purchased': {
      // `transactions_account_email_idx` (account_id, email, occurred_at): one range probe.
      const since = new Date(s.now.getTime() - leaf.days * DAY_MS)
      return sql`EXISTS (SELECT 1 FROM transactions ap
          WHERE ap.account_id = ${s.accountId}::int AND ap.email = ${s.email}
            AND ap.occurred_at >= ${since.toISOString()}::timestamptz
            AND ap.occurred_at <= ${s.now.toISOString()}::timestamptz)`
    }
    case 'event': {
      // Tracker events are kept per contact (`tracker_events_contact_idx`); no contact, no events.
      const category = leaf.category === undefined ? sql`` : sql` AND ae.category = ${leaf.category}::text`
      const action = leaf.action === undefined ? sql`` : sql` AND ae.action = ${leaf.action}::text`
      return sql`EXISTS (SELECT 1 FROM tracker_events ae
          WHERE ae.contact_id = c.id AND ae.account_id = ${s.accountId}::int${category}${action})`
    }
    case 'constant':
      return leaf.value ? sql`true` : sql`false`
  }
}

/** Two-valued throughout: every leaf is true or false, never NULL, so `not` is plain negation. */
function compiledConditionSql(cond: CompiledCondition, s: SqlScope): SQL {
  if ('all' in cond) {
    if (cond.all.length === 0) return sql`true`
    return sql`(${sql.join(
      cond.all.map((c) => compiledConditionSql(c, s)),
      sql` AND `,
    )})`
  }
  if ('any' in cond) {
    if (cond.any.length === 0) return sql`false`
    return sql`(${sql.join(
      cond.any.map((c) => compiledConditionSql(c, s)),
      sql` OR `,
    )})`
  }
  if ('not' in cond) return sql`(NOT ${compiledConditionSql(cond.not, s)})`
  return leafSql(cond.leaf, s)
}

/**
 * Evaluates a compiled condition for one subject in one statement. The contact is found by id when the run
 * knows it, else by address; without one, contact leaves are false and purchases still count by address.
 */
export async function evaluateCompiled(
  ex: Executor,
  cond: CompiledCondition,
  s: ConditionScope,
): Promise<boolean> {
  const met = await evaluateCompiledBatch(ex, cond, s, [s])
  return met.has(s.runId)
}

/**
 * Evaluates a compiled condition for a batch of runs of one pipeline in one statement (a check node executes
 * for hundreds of due runs at once): the subjects travel as one JSON parameter and each is joined to its
 * contact as `evaluateCompiled` does for one. The ids of the runs that meet it.
 */
export async function evaluateCompiledBatch(
  ex: Executor,
  cond: CompiledCondition,
  base: Pick<ConditionScope, 'accountId' | 'now'>,
  subjects: readonly BatchSubject[],
): Promise<Set<number>> {
  if (subjects.length === 0) return new Set()
  const rows = subjects.map((x) => ({
    run_id: x.runId,
    contact_id: x.contactId,
    email: x.email,
  }))
  const scope: SqlScope = {
    accountId: base.accountId,
    now: base.now,
    runId: sql`rsub.run_id`,
    email: sql`rsub.email`,
  }
  const met = await queryRows<{ run_id: string | number }>(
    ex,
    sql`SELECT rsub.run_id
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS rsub(run_id bigint, contact_id int, email text)
        LEFT JOIN contacts c ON c.account_id = ${base.accountId}::int
          AND c.id = coalesce(rsub.contact_id, (SELECT ce.id FROM contacts ce
                WHERE ce.account_id = ${base.accountId}::int AND ce.email = rsub.email))
        WHERE coalesce(${compiledConditionSql(cond, scope)}, false)`,
  )
  return new Set(met.map((r) => Number(r.run_id)))
}
