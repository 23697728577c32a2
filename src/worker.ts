import type { AppContext } from './core/context.js'
import { modules } from './modules/index.js'

/** Starts every module's job handlers and loops (ROLE=worker or all). */
export async function startWorker(ctx: AppContext): Promise<void> {
  for (const m of modules) if (m.startWorker) await m.startWorker(ctx)
}
