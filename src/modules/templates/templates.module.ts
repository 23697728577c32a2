import type { ModuleDef } from '../registry.js'
import { templateRoutes } from './templates.routes.js'

export const templatesModule: ModuleDef = { name: 'templates', apiRoutes: templateRoutes }
