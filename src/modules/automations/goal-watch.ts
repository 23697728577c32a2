import type { Condition } from '../pipelines/index.js'
import { evaluateConditionBatch } from './conditions.js'
import { goalPipelines, waitingRuns, wakeForGoal } from './goal-watch.repo.js'
import { conditionSubject, GOAL_RECHECK_MS, goalsPassed, type EngineCtx } from './nodes.js'

/** Waiting runs read per statement, and at most this many pages per pipeline and sweep. */
const PAGE = 2000
const PAGES_PER_SWEEP = 5

/**
 * Contract §6: "a run that meets the condition anywhere jumps to the goal", a run in a wait of days included.
 * The engine tries goals only when it executes a run, so a waiting run would meet its goal only when the wait
 * ends. Every GOAL_RECHECK_MS (as often as a run at a goal node checks its own), this sweep evaluates the goals
 * of each pipeline with one statement per goal over a page of its waiting runs, and makes due those that meet
 * one; the engine then jumps them (engine.ts, which puts a run back to wait, unlogged, when its goal is no
 * longer met by then). A pipeline with more waiting runs than a sweep reads is covered over several sweeps,
 * from where the last one stopped. Several workers may sweep at once: waking is idempotent.
 */
export function createGoalWatch(ctx: Pick<EngineCtx, 'db' | 'clock'>) {
  let last = Number.NEGATIVE_INFINITY
  const cursors = new Map<number, number>()

  async function sweepPipeline(p: Awaited<ReturnType<typeof goalPipelines>>[number], now: Date) {
    const goals = p.actions.filter((n) => n.type === 'goal' && n.properties.condition)
    if (goals.length === 0) return
    const goalIds = p.actions.filter((n) => n.type === 'goal').map((n) => n.id)
    for (let page = 0; page < PAGES_PER_SWEEP; page++) {
      const runs = await waitingRuns(ctx.db, p.id, goalIds, cursors.get(p.id) ?? 0, now, PAGE)
      cursors.set(p.id, runs.length < PAGE ? 0 : runs[runs.length - 1]!.id)
      const met: number[] = []
      let open = runs
      for (const g of goals) {
        const asking = open.filter((r) => !goalsPassed(r.state).includes(g.id))
        if (asking.length === 0) continue
        const yes = await evaluateConditionBatch(
          ctx.db,
          asking.map((r) => conditionSubject(p, r)),
          g.properties.condition as Condition,
          now,
        )
        met.push(...asking.filter((r) => yes.has(r.id)).map((r) => r.id))
        open = open.filter((r) => !yes.has(r.id))
      }
      await wakeForGoal(ctx.db, met, now)
      if (runs.length < PAGE) return
    }
  }

  /** One sweep, when GOAL_RECHECK_MS has passed since the last (by the engine's clock). */
  return async function watchGoals(): Promise<void> {
    const now = ctx.clock.now()
    if (now.getTime() - last < GOAL_RECHECK_MS) return
    last = now.getTime()
    for (const p of await goalPipelines(ctx.db)) await sweepPipeline(p, now)
  }
}
