import type { ModuleDef } from '../registry.js'
import { templateRoutes } from './templates.routes.js'

export { requireTemplate } from './templates.service.js'
export type { TemplateRow } from './templates.schemas.js'

export const templatesModule: ModuleDef = { name: 'templates', apiRoutes: templateRoutes }
