import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import type { ModuleDef } from '../registry.js'
import { campaignActionRoutes } from './campaign-actions.routes.js'
import { campaignArchiveRoutes } from './campaign-archive.routes.js'
import { startCampaignSender } from './campaign-sender.js'
import { campaignStatsRoutes } from './campaign-stats.routes.js'
import { campaignRoutes } from './campaigns.routes.js'

/** Campaigns: the resource, sending through the ledger, statistics and the public archive page. */
export const campaignsModule: ModuleDef = {
  name: 'campaigns',
  apiRoutes(app: ApiApp, ctx: AppContext) {
    campaignRoutes(app, ctx)
    campaignActionRoutes(app, ctx)
    campaignStatsRoutes(app, ctx)
  },
  publicRoutes: campaignArchiveRoutes,
  async startWorker(ctx) {
    const sender = startCampaignSender(ctx)
    ctx.onClose(() => sender.stop())
  },
}
