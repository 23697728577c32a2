import type { ModuleDef } from '../registry.js'
import { trackerEventRoutes } from './tracker-events.routes.js'

export const trackerEventsModule: ModuleDef = { name: 'tracker-events', apiRoutes: trackerEventRoutes }
