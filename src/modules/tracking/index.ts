import type { ModuleDef } from '../registry.js'
import { trackingRoutes } from './tracking.routes.js'
import { storedSources } from './tracking.sources.js'

export { readClickToken, readMessageToken, trackingLinks } from './tracking.links.js'
export { storedSources, type MessageSources } from './tracking.sources.js'

/**
 * Pages behind the links in mail. Campaigns will pass sources that also know campaign links, HTML and lists
 * (tracking.sources.ts) in place of `storedSources`.
 */
export const trackingModule: ModuleDef = {
  name: 'tracking',
  publicRoutes: (app, ctx) => trackingRoutes(app, ctx, storedSources),
}
