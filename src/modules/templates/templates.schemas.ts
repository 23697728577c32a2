import { Type, type Static } from '@sinclair/typebox'
import { sqlDateTime } from '../../core/http/formats.js'
import type { templates } from './templates.table.js'

export type TemplateRow = typeof templates.$inferSelect

const HTML_MAX = 4_000_000
/** Both are integer columns: a larger number is refused here rather than overflowing in the database. */
const INT_MAX = 2147483647
const optional = {
  folder: Type.Optional(Type.Integer({ minimum: 0, maximum: INT_MAX })),
  campaign_id: Type.Optional(Type.Integer({ minimum: 0, maximum: INT_MAX })),
  subject: Type.Optional(Type.String({ maxLength: 998 })),
}

export const CreateTemplateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  html: Type.String({ minLength: 1, maxLength: HTML_MAX }),
  ...optional,
})
export const UpdateTemplateBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  html: Type.Optional(Type.String({ minLength: 1, maxLength: HTML_MAX })),
  ...optional,
})
export type TemplateInput = Static<typeof UpdateTemplateBody>

/** The Template resource of api.md (`subject` is an addition used by transactional send-template). */
export const TemplateObject = Type.Object({
  id: Type.Integer(),
  folder: Type.Integer(),
  name: Type.String(),
  html: Type.String(),
  subject: Type.String(),
  campaign_id: Type.Integer(),
  created_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
  updated_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
})

export function toTemplateObject(row: TemplateRow): Static<typeof TemplateObject> {
  return {
    id: row.id,
    folder: row.folder,
    name: row.name,
    html: row.html,
    subject: row.subject,
    campaign_id: row.campaignId,
    created_at: sqlDateTime(row.createdAt),
    updated_at: sqlDateTime(row.updatedAt),
  }
}
