import { sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryRows } from '../../core/db/sql.js'
import type { PipelineNode } from '../pipelines/index.js'
import { idsOf, ts } from './runs.repo.js'

/** The SQL of the goal watch (goal-watch.ts): pipelines with goals, their waiting runs, waking those that met one. */

/** Node ids as one JSON parameter (runs.repo's idsOf takes numbers). */
const nodeIdsOf = (ids: readonly string[]): SQL =>
  sql`(SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))`

export interface GoalPipeline {
  id: number
  accountId: number
  actions: PipelineNode[]
}

/** Active, not deleted pipelines whose graph has a goal node. */
export async function goalPipelines(ex: Executor): Promise<GoalPipeline[]> {
  const rows = await queryRows<{ id: number; account_id: number; actions: PipelineNode[] | string }>(
    ex,
    sql`SELECT id, account_id, actions FROM pipelines
        WHERE status = 'active' AND deleted_at IS NULL AND actions @> '[{"type":"goal"}]'::jsonb
        ORDER BY id`,
  )
  return rows.map((r) => ({
    id: r.id,
    accountId: r.account_id,
    actions: typeof r.actions === 'string' ? (JSON.parse(r.actions) as PipelineNode[]) : r.actions,
  }))
}

export interface WaitingRun {
  id: number
  contactId: number | null
  email: string
  startedAt: Date
  state: Record<string, unknown>
}

/**
 * Up to `limit` runs of the pipeline due later than `now` (in a wait, or a webhook's retry), unclaimed, past
 * `afterId`, by id; runs at one of `goalNodes` are left out (a goal node checks its own condition).
 */
export async function waitingRuns(
  ex: Executor,
  pipelineId: number,
  goalNodes: readonly string[],
  afterId: number,
  now: Date,
  limit: number,
): Promise<WaitingRun[]> {
  const rows = await queryRows<{
    id: string | number
    contact_id: number | null
    email: string
    started_ms: string | number
    state: Record<string, unknown> | string
  }>(
    ex,
    sql`SELECT id, contact_id, email, (extract(epoch FROM started_at) * 1000)::bigint AS started_ms, state
        FROM automation_runs
        WHERE pipeline_id = ${pipelineId} AND status = 'active' AND id > ${afterId}
          AND due_at > ${ts(now)} AND (claimed_until IS NULL OR claimed_until <= ${ts(now)})
          AND node_id NOT IN ${nodeIdsOf(goalNodes)}
        ORDER BY id LIMIT ${limit}`,
  )
  return rows.map((r) => ({
    id: Number(r.id),
    contactId: r.contact_id,
    email: r.email,
    startedAt: new Date(Number(r.started_ms)),
    state: typeof r.state === 'string' ? (JSON.parse(r.state) as Record<string, unknown>) : r.state,
  }))
}

/**
 * Side effect: makes the runs of `ids` that still wait due `now`, their original due time kept in their state
 * (`wokenFrom`, epoch ms): the engine jumps them to the goal, or puts them back to wait (engine.ts). How many.
 */
export async function wakeForGoal(ex: Executor, ids: readonly number[], now: Date): Promise<number> {
  if (ids.length === 0) return 0
  const rows = await queryRows<{ id: string | number }>(
    ex,
    sql`UPDATE automation_runs
        SET state = state || jsonb_build_object('wokenFrom', (extract(epoch FROM due_at) * 1000)::bigint),
            due_at = ${ts(now)}
        WHERE id IN ${idsOf(ids)}
          AND status = 'active' AND due_at > ${ts(now)}
          AND (claimed_until IS NULL OR claimed_until <= ${ts(now)})
        RETURNING id`,
  )
  return rows.length
}
