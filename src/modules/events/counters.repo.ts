import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'

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

const SHARDS = 16

/**
 * Adds `delta` to the counters of a scope, in the caller's transaction (the one that writes the events).
 * The shard follows the message id, so one message always lands on one row and hits of many messages
 * spread over SHARDS rows. Mail outside any campaign or automation is not counted.
 */
export async function addToCounters(
  ex: Executor,
  scope: CounterScope,
  messageId: number,
  delta: Partial<Counters>,
): Promise<void> {
  const pipelineId = scope.pipelineId ?? 0
  if (scope.campaignId === 0 && pipelineId === 0) return
  const names = COUNTER_NAMES.filter((n) => (delta[n] ?? 0) !== 0)
  if (names.length === 0) return
  const cols = sql.raw(names.map((n) => `"${n}"`).join(', '))
  const values = sql.join(
    names.map((n) => sql`${delta[n] ?? 0}`),
    sql`, `,
  )
  const updates = sql.raw(names.map((n) => `"${n}" = stat_counters."${n}" + excluded."${n}"`).join(', '))
  // Side effect: creates the shard row on first use, then adds to it.
  await ex.execute(sql`
    INSERT INTO stat_counters (campaign_id, pipeline_id, action_id, shard, ${cols})
    VALUES (${scope.campaignId}, ${pipelineId}, ${scope.actionId ?? ''}, ${messageId % SHARDS}, ${values})
    ON CONFLICT (campaign_id, pipeline_id, action_id, shard) DO UPDATE SET ${updates}`)
}

/** The summed counters of a scope (zeros when nothing was counted). */
export async function readCounters(ex: Executor, scope: CounterScope): Promise<Counters> {
  const sums = sql.raw(COUNTER_NAMES.map((n) => `coalesce(sum("${n}"), 0)::float8 AS "${n}"`).join(', '))
  const row = await queryOne<Counters>(
    ex,
    sql`SELECT ${sums} FROM stat_counters
        WHERE campaign_id = ${scope.campaignId} AND pipeline_id = ${scope.pipelineId ?? 0}
          AND action_id = ${scope.actionId ?? ''}`,
  )
  const out = {} as Counters
  for (const n of COUNTER_NAMES) out[n] = Number(row?.[n] ?? 0)
  return out
}
