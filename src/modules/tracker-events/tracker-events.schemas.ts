import { Type, type Static } from '@sinclair/typebox'
import { PageNumber, PerPage } from '../../core/http/schemas.js'

/** `POST /tracker/events` (contract §9). */

export const MAX_EVENT_VALUE = 20_000

const Text = (maxLength: number) => Type.Optional(Type.String({ maxLength }))

export const TrackerEventBody = Type.Object({
  event: Type.Object({
    email: Type.String({ maxLength: 254 }),
    category: Text(255),
    action: Text(255),
    label: Text(1000),
    property: Text(1000),
    value: Type.Optional(
      Type.Unknown({
        description: `any JSON (often a JSON-encoded string); at most ${MAX_EVENT_VALUE} characters as sent`,
      }),
    ),
  }),
})
export type TrackerEventBodyT = Static<typeof TrackerEventBody>

/** The stored event; `value` JSON-encoded, as Ecomail answers it. */
export const TrackerEvent = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  category: Type.String(),
  action: Type.String(),
  label: Type.String(),
  property: Type.String(),
  value: Type.String({ description: 'the value sent, JSON-encoded' }),
  created_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS (UTC)' }),
})
export type TrackerEventT = Static<typeof TrackerEvent>

export const MAX_EVENTS_PAGE = 100
export const DEFAULT_EVENTS_PAGE = 20

/** `GET /subscribers/{email}/events`: paged as the email log, optionally one category and action. */
export const SubscriberEventsQuery = Type.Object({
  page: PageNumber,
  per_page: PerPage(MAX_EVENTS_PAGE, DEFAULT_EVENTS_PAGE),
  category: Type.Optional(Type.String({ maxLength: 255 })),
  action: Type.Optional(Type.String({ maxLength: 255 })),
})
export type SubscriberEventsQueryT = Static<typeof SubscriberEventsQuery>

export const SubscriberEventsPage = Type.Object({
  current_page: Type.Integer(),
  data: Type.Array(
    Type.Composite([
      TrackerEvent,
      Type.Object({
        timestamp: Type.String({ description: 'as created_at (Ecomail clients read this name)' }),
      }),
    ]),
  ),
  per_page: Type.Integer(),
  total: Type.Integer(),
  last_page: Type.Integer(),
})
