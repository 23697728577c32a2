import type { AppContext } from '../../core/context.js'
import { createEngine, type Engine } from './engine.js'

const running = new WeakMap<AppContext, Engine>()

/**
 * Runs the engine now until nothing is due (tests, and anything that wants runs moved at once): through the
 * process's running engine when the worker runs, else a one-off one. How many node executions it claimed.
 */
export async function runAutomations(ctx: AppContext, maxRounds?: number): Promise<number> {
  return (running.get(ctx) ?? createEngine(ctx)).runOnce(maxRounds)
}

/** Starts the process's engine loop (ROLE=worker|all); it stops when the context closes. */
export function startAutomationEngine(ctx: AppContext): void {
  const engine = createEngine(ctx)
  running.set(ctx, engine)
  engine.start()
  ctx.onClose(async () => {
    running.delete(ctx)
    await engine.stop()
  })
}
