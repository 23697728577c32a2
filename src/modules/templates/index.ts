export { requireTemplate } from './templates.service.js'
export type { TemplateRow } from './templates.schemas.js'
