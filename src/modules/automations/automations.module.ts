import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import type { ModuleDef } from '../registry.js'
import { automationLogRoutes } from './automation-log.routes.js'
import { automationStatsRoutes } from './automation-stats.routes.js'

/**
 * What reads automations back over the API: `GET /pipelines/{id}/stats`, `stats-detail` and
 * `GET /subscribers/{email}/automation-log`. The engine's module registers `automationReadRoutes` among its
 * own routes; until then this minimal module does.
 */
export function automationReadRoutes(app: ApiApp, ctx: AppContext): void {
  automationStatsRoutes(app, ctx)
  automationLogRoutes(app, ctx)
}

export const automationsReadModule: ModuleDef = { name: 'automations-read', apiRoutes: automationReadRoutes }
