import type { AppContext } from '../core/context.js'
import type { ApiApp } from '../core/http/app-types.js'

/** What a module contributes; app.ts and worker.ts wire these, so core never imports modules. */
export interface ModuleDef {
  name: string
  /** Routes behind the `key` header, rate-limited per key. */
  apiRoutes?: (app: ApiApp, ctx: AppContext) => void | Promise<void>
  /** Routes without an API key: pages linked from mail, admin API, health. */
  publicRoutes?: (app: ApiApp, ctx: AppContext) => void | Promise<void>
  /** pg-boss queues the module sends to; created at start in every role. */
  queues?: readonly string[]
  /** Job handlers and loops run by ROLE=worker|all. */
  startWorker?: (ctx: AppContext) => Promise<void>
}
