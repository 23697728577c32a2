import type { Executor } from '../../core/db/client.js'
import type { Condition, PipelineRow } from '../pipelines/index.js'
import { evaluateConditionBatch } from './conditions.js'
import { conditionSubject, goalsPassed } from './nodes.js'
import type { ClaimedRun } from './runs.repo.js'

/** A run as goal conditions read it: a claimed run (engine.ts) or a waiting one (goal-watch.ts). */
export type GoalRun = Pick<ClaimedRun, 'id' | 'contactId' | 'email' | 'startedAt' | 'state'>

/**
 * The goal node each run meets the condition of, by run id, for a whole group of runs at once: one condition
 * statement per goal node of the pipeline (evaluateConditionBatch), not one per run. Goals are tried in graph
 * order and a run gets the first it meets, skipping goals it has passed.
 */
export async function firstGoalsMet(
  ex: Executor,
  p: Pick<PipelineRow, 'accountId' | 'id' | 'actions'>,
  runs: readonly GoalRun[],
  now: Date,
): Promise<Map<number, string>> {
  const met = new Map<number, string>()
  let open = runs
  for (const g of p.actions) {
    if (open.length === 0) break
    if (g.type !== 'goal' || !g.properties.condition) continue
    const asking = open.filter((r) => !goalsPassed(r.state).includes(g.id))
    if (asking.length === 0) continue
    const yes = await evaluateConditionBatch(
      ex,
      asking.map((r) => conditionSubject(p, r)),
      g.properties.condition as Condition,
      now,
    )
    if (yes.size === 0) continue
    for (const r of asking) if (yes.has(r.id)) met.set(r.id, g.id)
    open = open.filter((r) => !met.has(r.id))
  }
  return met
}
