import type { ModuleDef } from '../registry.js'
import { trackerEventRoutes } from './tracker-events.routes.js'

export { trackerEvents } from './tracker-events.table.js'

export const trackerEventsModule: ModuleDef = { name: 'tracker-events', apiRoutes: trackerEventRoutes }
