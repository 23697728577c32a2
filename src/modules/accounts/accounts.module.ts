import type { ModuleDef } from '../registry.js'
import { adminRoutes } from './admin.routes.js'

export const accountsModule: ModuleDef = { name: 'accounts', publicRoutes: adminRoutes }
