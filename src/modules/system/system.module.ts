import type { ModuleDef } from '../registry.js'
import { systemRoutes } from './system.routes.js'

export const systemModule: ModuleDef = { name: 'system', publicRoutes: systemRoutes }
