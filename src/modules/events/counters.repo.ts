import { sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'
import type { StatsScope } from './scope-stats.repo.js'

export type CounterName =
  | 'inject'
  | 'bounce'
  | 'hard_bounce'
  | 'soft_bounce'
  | 'open'
  | 'total_open'
  | 'click'
  | 'total_click'
  | 'spam'
  | 'unsub'

export const COUNTER_NAMES: readonly CounterName[] = [
  'inject',
  'bounce',
  'hard_bounce',
  'soft_bounce',
  'open',
  'total_open',
  'click',
  'total_click',
  'spam',
  'unsub',
]

export type Counters = Record<CounterName, number>

/** A campaign (pipelineId 0, actionId '') or one mail node of an automation. */
export interface CounterScope {
  campaignId: number
  pipelineId?: number | null
  actionId?: string | null
}

/** Rows each scope's counters are spread over (by message id). */
export const COUNTER_SHARDS = 16

/**
 * The statement that adds `delta` to a scope's counters (creating the shard row on first use). Undefined
 * when nothing is to be counted: mail outside any campaign or automation, or an empty delta. The shard follows the message id, so
 * one message always lands on one row and hits of many messages spread over COUNTER_SHARDS rows.
 */
function counterUpsertSql(
  scope: CounterScope,
  messageId: number,
  delta: Partial<Record<CounterName, number>>,
): SQL | undefined {
  const pipelineId = scope.pipelineId ?? 0
  if (scope.campaignId === 0 && pipelineId === 0) return undefined
  const names = COUNTER_NAMES.filter((n) => delta[n] !== undefined && delta[n] !== 0)
  if (names.length === 0) return undefined
  const cols = sql.raw(names.map((n) => `"${n}"`).join(', '))
  const values = sql.join(
    names.map((n) => sql`${delta[n]!}::bigint`),
    sql`, `,
  )
  const updates = sql.raw(names.map((n) => `"${n}" = stat_counters."${n}" + excluded."${n}"`).join(', '))
  return sql`INSERT INTO stat_counters (campaign_id, pipeline_id, action_id, shard, ${cols})
    SELECT ${scope.campaignId}::int, ${pipelineId}::int, ${scope.actionId ?? ''}::text,
           ${messageId % COUNTER_SHARDS}::smallint, ${values}
    ON CONFLICT (campaign_id, pipeline_id, action_id, shard) DO UPDATE SET ${updates}`
}

/**
 * Counter increments computed from many rows at once, as the `INSERT … ON CONFLICT` statement a caller folds
 * into its own (a CTE), so a batch's events and counters stay one atomic statement. Each row of `from` (a FROM
 * clause: a CTE name, with its own WHERE if need be) is a message: `scope` and `messageId` are column
 * expressions over it, `deltas` the aggregates each counter grows by. Rows are grouped per scope and shard and
 * written in key order, so two statements adding to the same scope cannot deadlock on its shard rows.
 */
export function counterIncrementsSql(p: {
  from: SQL
  scope: { campaignId: SQL; pipelineId: SQL; actionId: SQL }
  messageId: SQL
  deltas: Partial<Record<CounterName, SQL>>
}): SQL {
  const names = COUNTER_NAMES.filter((n) => p.deltas[n] !== undefined)
  const cols = sql.raw(names.map((n) => `"${n}"`).join(', '))
  const values = sql.join(
    names.map((n) => p.deltas[n]!),
    sql`, `,
  )
  const updates = sql.raw(names.map((n) => `"${n}" = stat_counters."${n}" + excluded."${n}"`).join(', '))
  return sql`INSERT INTO stat_counters (campaign_id, pipeline_id, action_id, shard, ${cols})
    SELECT (${p.scope.campaignId})::int, (${p.scope.pipelineId})::int, (${p.scope.actionId})::text,
           (${p.messageId} % ${sql.raw(String(COUNTER_SHARDS))})::smallint, ${values}
    FROM ${p.from}
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (campaign_id, pipeline_id, action_id, shard) DO UPDATE SET ${updates}`
}

/** Adds `delta` to the counters of a scope, in the caller's transaction (the one that writes the events). */
export async function addToCounters(
  ex: Executor,
  scope: CounterScope,
  messageId: number,
  delta: Partial<Counters>,
): Promise<void> {
  const upsert = counterUpsertSql(scope, messageId, delta)
  if (upsert) await ex.execute(upsert)
}

/** The counters of the `stat_counters` rows `where` selects, summed (zeros when nothing was counted). */
async function sumCounters(ex: Executor, where: SQL): Promise<Counters> {
  const sums = sql.raw(COUNTER_NAMES.map((n) => `coalesce(sum("${n}"), 0)::float8 AS "${n}"`).join(', '))
  const row = await queryOne<Counters>(ex, sql`SELECT ${sums} FROM stat_counters WHERE ${where}`)
  const out = {} as Counters
  for (const n of COUNTER_NAMES) out[n] = Number(row?.[n] ?? 0)
  return out
}

/** The summed counters of a scope (zeros when nothing was counted). */
export function readCounters(ex: Executor, scope: CounterScope): Promise<Counters> {
  return sumCounters(
    ex,
    sql`campaign_id = ${scope.campaignId} AND pipeline_id = ${scope.pipelineId ?? 0}
        AND action_id = ${scope.actionId ?? ''}`,
  )
}

/**
 * The counters of a statistics scope: a campaign's, or an automation's summed over all its mail nodes
 * (primary-key prefix of `stat_counters`) or one node's.
 */
export function readScopeCounters(ex: Executor, scope: StatsScope): Promise<Counters> {
  if ('campaignId' in scope) return readCounters(ex, { campaignId: scope.campaignId })
  return sumCounters(
    ex,
    sql`campaign_id = 0 AND pipeline_id = ${scope.pipelineId}::int${
      scope.actionId !== undefined ? sql` AND action_id = ${scope.actionId}` : sql``
    }`,
  )
}
