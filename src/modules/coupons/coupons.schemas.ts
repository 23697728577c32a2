import { Type, type Static } from '@sinclair/typebox'
import { Flag, Nullable } from '../../core/http/schemas.js'
import { sqlDateTime } from '../../core/http/formats.js'
import type { FolderRow } from './coupons.repo.js'

/** Codes per import or delete call: a large shop's batch, small enough to answer within a request. */
export const MAX_CODES_PER_CALL = 10_000
export const MAX_CODE_LENGTH = 255
// A code is printed into mail (subject lines included): no control characters, no line breaks.
const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001f\\u007f]*$'

const Codes = Type.Array(Type.String({ maxLength: MAX_CODE_LENGTH, pattern: NO_CONTROL_CHARACTERS }), {
  minItems: 1,
  maxItems: MAX_CODES_PER_CALL,
  description: `coupon codes (trimmed; at most ${MAX_CODES_PER_CALL} per call, ${MAX_CODE_LENGTH} characters each)`,
})
const FolderId = Nullable(
  Type.Integer({ minimum: 1, maximum: 2147483647, description: 'omitted or null: the default folder' }),
)

export const CreateFolderBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }) })

export const ImportBody = Type.Object({
  folderId: Type.Optional(FolderId),
  codes: Codes,
  valid_until: Type.Optional(
    Nullable(
      Type.String({
        pattern: '^\\d{4}-\\d{2}-\\d{2}$',
        description: 'YYYY-MM-DD: valid through that day (UTC)',
      }),
    ),
  ),
  update_existing: Type.Optional(Flag({ default: false })),
})
export type ImportInput = Static<typeof ImportBody>

export const ImportResult = Type.Object({
  imported: Type.Integer({ description: 'codes added, and with update_existing the existing ones updated' }),
  duplicated: Type.Integer({
    description: 'codes already in the folder (or repeated in the call) and left alone',
  }),
  totalCount: Type.Integer({ description: 'codes in the folder after the import' }),
})

export const DeleteBody = Type.Object({ folderId: Type.Optional(FolderId), codes: Codes })
export type DeleteInput = Static<typeof DeleteBody>

export const DeleteResult = Type.Object({
  deleted: Type.Integer(),
  invalid: Type.Integer({
    description: 'codes given that the folder does not hold (a repeated code counts once)',
  }),
})

export const FolderObject = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  default: Type.Boolean({ description: 'the folder codes go to when a call names none' }),
  total: Type.Integer({ description: 'codes in the folder' }),
  available: Type.Integer({ description: 'codes not handed out yet and not expired' }),
  assigned: Type.Integer({ description: 'codes handed out in mail' }),
  missed: Type.Integer({ description: 'mails that asked for a code when none was left' }),
  created_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
})
export type FolderObjectT = Static<typeof FolderObject>

export function toFolderObject(row: FolderRow): FolderObjectT {
  return {
    id: row.id,
    name: row.name,
    default: row.is_default,
    total: row.total,
    available: row.available,
    assigned: row.assigned,
    missed: row.missed,
    created_at: sqlDateTime(new Date(row.created_at)),
  }
}
