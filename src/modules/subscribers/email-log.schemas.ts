import { Type } from '@sinclair/typebox'
import { EmailLogEntry } from '../events/index.js'

export const EmailLogParams = Type.Object({ email: Type.String({ maxLength: 1000 }) })

export const EmailLogPage = Type.Object({
  current_page: Type.Integer(),
  data: Type.Array(EmailLogEntry),
  per_page: Type.Integer(),
  total: Type.Integer(),
  last_page: Type.Integer(),
})
