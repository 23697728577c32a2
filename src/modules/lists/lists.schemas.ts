import { Type, type Static } from '@sinclair/typebox'
import { sqlDateTime } from '../../core/http/formats.js'
import { AnyObject, EmptyArray, Flag } from '../../core/http/schemas.js'
import type { lists } from './lists.table.js'

export type ListRow = typeof lists.$inferSelect

const Url = Type.String({ maxLength: 2000 })
const listSettings = {
  from_name: Type.Optional(Type.String({ maxLength: 255 })),
  from_email: Type.Optional(Type.Union([Type.String({ format: 'email', maxLength: 254 }), Type.Literal('')])),
  reply_to: Type.Optional(Type.Union([Type.String({ format: 'email', maxLength: 254 }), Type.Literal('')])),
  sub_success_page: Type.Optional(Url),
  sub_confirmed_page: Type.Optional(Url),
  unsub_page: Type.Optional(Url),
  double_optin: Type.Optional(Flag()),
  conf_subject: Type.Optional(Type.String({ maxLength: 255 })),
  conf_message: Type.Optional(Type.String({ maxLength: 500_000 })),
  custom_fields: Type.Optional(Type.Union([AnyObject, EmptyArray])),
}

export const CreateListBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  ...listSettings,
})
export const UpdateListBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  ...listSettings,
})
export type ListInput = Static<typeof UpdateListBody>

const listFields = {
  name: Type.String(),
  from_name: Type.String(),
  from_email: Type.String(),
  reply_to: Type.String(),
  sub_success_page: Type.String(),
  sub_confirmed_page: Type.String(),
  unsub_page: Type.String(),
  double_optin: Type.Boolean(),
  conf_subject: Type.String(),
  conf_message: Type.String(),
  created_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
  updated_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
}

/** A list as `GET /lists`, `POST /lists` and `PUT /lists/{id}` return it (numeric id). */
export const ListObject = Type.Object({ id: Type.Integer(), ...listFields })

export const ListCounts = Type.Object({
  subscribed: Type.Integer(),
  unsubscribed: Type.Integer(),
  soft_bounced: Type.Integer(),
  hard_bounced: Type.Integer(),
  complained: Type.Integer(),
  unconfirmed: Type.Integer(),
})
export type ListCountsT = Static<typeof ListCounts>

/** `GET /lists/{id}` (contract §3): the id as a string, with custom fields, segments and counts. */
export const ListDetail = Type.Object({
  list: Type.Object({
    id: Type.String(),
    ...listFields,
    custom_fields: AnyObject,
    segments: Type.Array(AnyObject),
    active_subscribers: Type.Integer(),
  }),
  subscribers: ListCounts,
})

export function toListObject(row: ListRow): Static<typeof ListObject> {
  return {
    id: row.id,
    name: row.name,
    from_name: row.fromName,
    from_email: row.fromEmail,
    reply_to: row.replyTo,
    sub_success_page: row.subSuccessPage,
    sub_confirmed_page: row.subConfirmedPage,
    unsub_page: row.unsubPage,
    double_optin: row.doubleOptin,
    conf_subject: row.confSubject,
    conf_message: row.confMessage,
    created_at: sqlDateTime(row.createdAt),
    updated_at: sqlDateTime(row.updatedAt),
  }
}

export function toListDetail(
  row: ListRow,
  counts: ListCountsT,
  segments: Record<string, unknown>[],
): Static<typeof ListDetail> {
  return {
    list: {
      ...toListObject(row),
      id: String(row.id),
      custom_fields: row.customFields,
      segments,
      active_subscribers: counts.subscribed,
    },
    subscribers: counts,
  }
}
