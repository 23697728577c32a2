import { Type, type Static } from '@sinclair/typebox'

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
