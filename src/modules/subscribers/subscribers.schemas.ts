import { Type, type Static } from '@sinclair/typebox'
import { isoMicro, sqlDateTime } from '../../core/http/formats.js'
import { AnyObject, MapOrEmpty, Nullable, OrNull } from '../../core/http/schemas.js'
import type { contacts, memberships } from './subscribers.table.js'

/**
 * Wire shapes of subscribers (api.md "Subscriber …", contract §3) and the row → wire mappers.
 * Every subscriber endpoint answers through these, so one person looks the same everywhere.
 */
export type ContactRow = typeof contacts.$inferSelect
export type MembershipRow = typeof memberships.$inferSelect

/** Membership statuses (api.md). */
export const STATUS = { subscribed: 1, unsubscribed: 2, hardBounce: 4, complaint: 5, unconfirmed: 6 } as const
/** `GET /lists/{id}/subscribers?status=` names → codes. */
export const STATUS_FILTERS = {
  subscribed: 1,
  unsubscribed: 2,
  not_confirmed: 6,
  bounced: 4,
  complained: 5,
} as const

// ---- input ----

/** A custom field value: a scalar, or `{value, type}` (contract §3). */
export const CustomFieldValue = Type.Union([
  Type.String(),
  Type.Number(),
  Type.Boolean(),
  Type.Null(),
  Type.Object({
    value: Type.Unknown(),
    type: Type.Optional(
      Type.Union(['string', 'int', 'float', 'date', 'url', 'json'].map((t) => Type.Literal(t))),
    ),
  }),
])

// String first on purpose: with type coercion on, a Null branch tried first would turn "" into null.
const str = (max = 255) => Type.Optional(Type.Union([Type.String({ maxLength: max }), Type.Null()]))
// null means "not given", as the service (and the bulk endpoints) read it (OrNull: null stays null, 0 stays 0).

/** `subscriber_data` of subscribe / update-subscriber (email checked by the service, with its own message). */
export const SubscriberData = Type.Object({
  email: Type.Optional(Type.String({ maxLength: 254 })),
  name: str(),
  surname: str(),
  gender: str(20),
  company: str(),
  city: str(),
  street: str(),
  zip: str(20),
  // A two-letter code or a country's name (the service stores the code).
  country: str(100),
  phone: str(50),
  pretitle: str(50),
  surtitle: str(50),
  birthday: str(32),
  nameday: str(32),
  vokativ: str(),
  vokativ_s: str(),
  source: str(),
  // A number, as a numeric string, or by its list-page name ("subscribed"): checkStatus reads all three.
  status: Type.Optional(
    Type.Unsafe<number | string | null>({
      type: ['integer', 'string', 'null'],
      maxLength: 32,
      description: 'a status number, or its list-page name (subscribed, unsubscribed, …)',
    }),
  ),
  rating: Type.Optional(OrNull(Type.Number())),
  // Or a map of them: PHP writes a list with gaps in its keys (after array_unique or array_filter) as an object.
  tags: Type.Optional(
    Type.Union([Type.Null(), Type.Array(Type.String()), Type.Record(Type.String(), Type.String())]),
  ),
  groups: Type.Optional(MapOrEmpty(Type.Record(Type.String(), Type.Array(Type.String())))),
  // Checked by the service (5000 characters in total, unique keys after trim + lower-case).
  custom_fields: Type.Optional(Type.Unknown()),
})
export type SubscriberDataT = Static<typeof SubscriberData>

// ---- output ----

/** `POST /lists/{id}/subscribe` (contract §3). */
export const SubscribeReply = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  surname: Type.String(),
  email: Type.String(),
  gender: Type.String(),
  bounce_soft: Type.Integer(),
  bounced_hard: Type.Integer(),
  bounce_message: Nullable(Type.String()),
  inserted_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
  already_subscribed: Type.Boolean(),
  status: Type.Integer({ description: 'status in this list' }),
  list_id: Type.Integer(),
})

/** "Subscriber in a list (detail)": `GET /lists/{id}/subscriber/{email}`, by phone, update-subscriber. */
export const SubscriberDetail = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  surname: Type.String(),
  email: Type.String(),
  company: Type.String(),
  city: Type.String(),
  street: Type.String(),
  zip: Type.String(),
  country: Type.String(),
  phone: Type.String(),
  gender: Type.String(),
  pretitle: Type.String(),
  surtitle: Type.String(),
  birthday: Nullable(Type.String()),
  nameday: Nullable(Type.String()),
  vokativ: Type.String(),
  vokativ_s: Type.String(),
  tags: Type.Array(Type.String()),
  rating: Type.Number(),
  inserted_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
  list_id: Type.Integer(),
  status: Type.Integer(),
  source: Type.String(),
  subscribed_at: Type.String({ description: 'ISO 8601 UTC with microseconds' }),
  unsubscribed_at: Nullable(Type.String()),
  custom_fields: AnyObject,
  groups: Type.Record(Type.String(), Type.Array(Type.String())),
  bounce_soft: Type.Integer(),
  bounced_hard: Type.Integer(),
  bounce_message: Nullable(Type.String({ description: "the relay's or report's words on the last bounce" })),
})

/** "Subscriber entry in a list page": `GET /lists/{id}/subscribers`. */
export const ListPageEntry = Type.Object({
  id: Type.Integer({ description: "the membership's id, as in the global subscriber's lists" }),
  list_id: Type.Integer(),
  email: Type.String(),
  status: Type.Integer(),
  subscribed_at: Type.String({ description: 'ISO 8601 UTC' }),
  unsubscribed_at: Nullable(Type.String()),
  custom_fields: AnyObject,
  groups: Nullable(Type.Record(Type.String(), Type.Array(Type.String()))),
  source: Type.String(),
  subscriber: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    surname: Type.String(),
    email: Type.String(),
    gender: Type.String(),
    company: Nullable(Type.String()),
    city: Type.String(),
    country: Type.String(),
    phone: Nullable(Type.String()),
  }),
})

export const GlobalListMembership = Type.Object({
  id: Type.Integer(),
  list_id: Type.Integer(),
  email: Type.String(),
  status: Type.Integer(),
  subscribed_at: Type.String({ description: 'ISO 8601 UTC' }),
  source: Type.String(),
  groups: Type.Record(Type.String(), Type.Array(Type.String()), {
    description: "the person's preference groups (kept per person, so the same in each list)",
  }),
})

/** "Subscriber (global, across all lists)": `GET /subscribers/{email}` and search results. */
export const GlobalSubscriber = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  surname: Type.String(),
  email: Type.String(),
  gender: Type.String(),
  company: Nullable(Type.String()),
  city: Type.String(),
  country: Type.String(),
  phone: Nullable(Type.String()),
  vokativ: Type.String(),
  vokativ_s: Type.String(),
  bounce_soft: Type.Integer(),
  bounced_hard: Type.Integer(),
  bounce_message: Nullable(Type.String({ description: "the relay's or report's words on the last bounce" })),
  inserted_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
  rating: Type.Number(),
  tags: Type.Array(Type.String()),
  custom_fields: AnyObject,
  lists: Type.Record(Type.String(), GlobalListMembership),
})

/** `DELETE /lists/{id}/unsubscribe` (contract §3). */
export const UnsubscribeReply = Type.Object({
  id: Type.Integer(),
  list_id: Type.Integer(),
  email: Type.String(),
  status: Type.Integer(),
  subscribed_at: Type.String({ description: 'ISO 8601 UTC with microseconds' }),
  unsubscribed_at: Nullable(Type.String()),
  custom_fields: AnyObject,
  source: Type.String(),
})

export function toSubscribeReply(
  c: ContactRow,
  m: MembershipRow,
  alreadySubscribed: boolean,
): Static<typeof SubscribeReply> {
  return {
    id: c.id,
    name: c.name,
    surname: c.surname,
    email: c.email,
    gender: c.gender,
    bounce_soft: c.bounceSoft,
    bounced_hard: c.bouncedHard,
    bounce_message: c.bounceMessage,
    inserted_at: sqlDateTime(c.insertedAt),
    already_subscribed: alreadySubscribed,
    status: m.status,
    list_id: m.listId,
  }
}

export function toSubscriberDetail(c: ContactRow, m: MembershipRow): Static<typeof SubscriberDetail> {
  return {
    id: c.id,
    name: c.name,
    surname: c.surname,
    email: c.email,
    company: c.company ?? '',
    city: c.city,
    street: c.street,
    zip: c.zip,
    country: c.country,
    phone: c.phone ?? '',
    gender: c.gender,
    pretitle: c.pretitle,
    surtitle: c.surtitle,
    birthday: c.birthday,
    nameday: c.nameday,
    vokativ: c.vokativ,
    vokativ_s: c.vokativS,
    tags: c.tags,
    rating: c.rating,
    inserted_at: sqlDateTime(c.insertedAt),
    list_id: m.listId,
    status: m.status,
    source: m.source,
    subscribed_at: isoMicro(m.subscribedAt),
    unsubscribed_at: isoMicro(m.unsubscribedAt),
    custom_fields: c.customFields,
    groups: c.groups,
    bounce_soft: c.bounceSoft,
    bounced_hard: c.bouncedHard,
    bounce_message: c.bounceMessage,
  }
}

export function toListPageEntry(c: ContactRow, m: MembershipRow): Static<typeof ListPageEntry> {
  return {
    id: m.id,
    list_id: m.listId,
    email: c.email,
    status: m.status,
    subscribed_at: isoMicro(m.subscribedAt),
    unsubscribed_at: isoMicro(m.unsubscribedAt),
    custom_fields: c.customFields,
    groups: c.groups,
    source: m.source,
    subscriber: {
      id: c.id,
      name: c.name,
      surname: c.surname,
      email: c.email,
      gender: c.gender,
      company: c.company,
      city: c.city,
      country: c.country,
      phone: c.phone,
    },
  }
}

export function toGlobalSubscriber(c: ContactRow, ms: MembershipRow[]): Static<typeof GlobalSubscriber> {
  const lists: Record<string, Static<typeof GlobalListMembership>> = {}
  for (const m of ms) {
    lists[String(m.listId)] = {
      id: m.id,
      list_id: m.listId,
      email: c.email,
      status: m.status,
      subscribed_at: isoMicro(m.subscribedAt),
      source: m.source,
      groups: c.groups,
    }
  }
  return {
    id: c.id,
    name: c.name,
    surname: c.surname,
    email: c.email,
    gender: c.gender,
    company: c.company,
    city: c.city,
    country: c.country,
    phone: c.phone,
    vokativ: c.vokativ,
    vokativ_s: c.vokativS,
    bounce_soft: c.bounceSoft,
    bounced_hard: c.bouncedHard,
    bounce_message: c.bounceMessage,
    inserted_at: sqlDateTime(c.insertedAt),
    rating: c.rating,
    tags: c.tags,
    custom_fields: c.customFields,
    lists,
  }
}

export function toUnsubscribeReply(c: ContactRow, m: MembershipRow): Static<typeof UnsubscribeReply> {
  return {
    id: m.id,
    list_id: m.listId,
    email: c.email,
    status: m.status,
    subscribed_at: isoMicro(m.subscribedAt),
    unsubscribed_at: isoMicro(m.unsubscribedAt),
    custom_fields: c.customFields,
    source: m.source,
  }
}
