import type { AppContext } from '../../core/context.js'
import type { ModuleDef } from '../registry.js'
import { createEngine, type Engine } from './engine.js'
import { triggerRoutes } from './trigger.routes.js'

export { automationLog, automationRuns, type RunStatus } from './automations.table.js'

const running = new WeakMap<AppContext, Engine>()

/**
 * Runs the engine now until nothing is due (tests, and anything that wants runs moved at once): through the
 * process's running engine when the worker runs, else a one-off one. How many node executions it claimed.
 */
export async function runAutomations(ctx: AppContext, maxRounds?: number): Promise<number> {
  return (running.get(ctx) ?? createEngine(ctx)).runOnce(maxRounds)
}

/** Automations: triggers (signals, the trigger endpoint, date fields) and the engine that moves runs. */
export const automationsModule: ModuleDef = {
  name: 'automations',
  apiRoutes: triggerRoutes,
  async startWorker(ctx) {
    const engine = createEngine(ctx)
    running.set(ctx, engine)
    engine.start()
    ctx.onClose(async () => {
      running.delete(ctx)
      await engine.stop()
    })
  },
}
