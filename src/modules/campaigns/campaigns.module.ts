import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import type { ModuleDef } from '../registry.js'
import { campaignActionRoutes } from './campaign-actions.routes.js'
import { campaignArchiveRoutes } from './campaign-archive.routes.js'
import { campaignStatsRoutes } from './campaign-stats.routes.js'
import { campaignRoutes } from './campaigns.routes.js'

/**
 * Campaigns: the resource, preparing its recipients for the send ledger (campaignOrigin: the delivery module
 * sends them), statistics and the public archive page.
 */
export const campaignsModule: ModuleDef = {
  name: 'campaigns',
  apiRoutes(app: ApiApp, ctx: AppContext) {
    campaignRoutes(app, ctx)
    campaignActionRoutes(app, ctx)
    campaignStatsRoutes(app, ctx)
  },
  publicRoutes: campaignArchiveRoutes,
}
