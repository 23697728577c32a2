import type { AppContext } from '../../core/context.js'
import type { ModuleDef } from '../registry.js'
import { trackingRoutes } from './tracking.routes.js'
import type { MessageSources } from './tracking.sources.js'

/**
 * Pages behind the links in mail. The module list passes sources that also know campaign links, HTML and
 * lists (tracking.sources.ts), so tracking never imports the campaigns module.
 */
export function createTrackingModule(sources: (ctx: AppContext) => MessageSources): ModuleDef {
  return {
    name: 'tracking',
    publicRoutes: (app, ctx) => trackingRoutes(app, ctx, sources(ctx)),
  }
}
