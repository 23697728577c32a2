import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import type { ModuleDef } from '../registry.js'
import { automationLogRoutes } from './automation-log.routes.js'
import { automationStatsRoutes } from './automation-stats.routes.js'
import { startAutomationEngine } from './engine-runner.js'
import { triggerRoutes } from './trigger.routes.js'

/**
 * Automations: triggers (signals, `POST /pipelines/{id}/trigger`, date fields), the engine that moves runs, and
 * what reads them back (`GET /pipelines/{id}/stats`, `stats-detail`, `GET /subscribers/{email}/automation-log`).
 */
export const automationsModule: ModuleDef = {
  name: 'automations',
  apiRoutes(app: ApiApp, ctx: AppContext) {
    triggerRoutes(app, ctx)
    automationStatsRoutes(app, ctx)
    automationLogRoutes(app, ctx)
  },
  async startWorker(ctx) {
    startAutomationEngine(ctx)
  },
}
