import type { ModuleDef } from '../registry.js'
import { searchRoutes } from './search.routes.js'

export const searchModule: ModuleDef = { name: 'search', apiRoutes: searchRoutes }
