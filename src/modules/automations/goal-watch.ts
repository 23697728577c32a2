import { goalPipelines, waitingRuns, wakeForGoal } from './goal-watch.repo.js'
import { firstGoalsMet } from './goals-met.js'
import { GOAL_RECHECK_MS, type EngineCtx } from './nodes.js'

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
    if (!p.actions.some((n) => n.type === 'goal' && n.properties.condition)) return
    const goalIds = p.actions.filter((n) => n.type === 'goal').map((n) => n.id)
    for (let page = 0; page < PAGES_PER_SWEEP; page++) {
      const runs = await waitingRuns(ctx.db, p.id, goalIds, cursors.get(p.id) ?? 0, now, PAGE)
      cursors.set(p.id, runs.length < PAGE ? 0 : runs[runs.length - 1]!.id)
      const met = await firstGoalsMet(ctx.db, p, runs, now)
      await wakeForGoal(ctx.db, [...met.keys()], now)
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
