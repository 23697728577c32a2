import { Type, type Static } from '@sinclair/typebox'
import { commonErrors, EmptyArray, FieldErrorsBody, Flag } from '../../core/http/schemas.js'
import { SubscriberData } from './subscribers.schemas.js'

/** Request bodies and replies of the subscriber writes (contract §3, api.md "Lists and their subscribers"). */

/** At most this many entries of a bulk call are read; the rest are silently ignored (api.md Limits). */
export const BULK_LIMIT = 3000

/**
 * A switch (core's Flag: true or false, or "1"/"0" as PHP forms and settings hold them); read with flagValue.
 * Bulk update's allow_resubscribe took "1" (checkFlag) where these answered 422.
 */
const flag = (description: string) => Type.Optional(Flag({ description }))

export const SubscribeBody = Type.Object({
  subscriber_data: SubscriberData,
  // Beside subscriber_data too, where clients built from Ecomail's documentation put them (a generated SDK's
  // groups, a Notion sync's tags): taken when subscriber_data carries none of its own.
  tags: SubscriberData.properties.tags,
  groups: SubscriberData.properties.groups,
  update_existing: flag('write the given fields onto an existing contact (default false)'),
  resubscribe: flag('bring back an unsubscribed, bounced or complained address (default false)'),
  skip_confirmation: flag('subscribe at once on a double opt-in list (default false)'),
  trigger_autoresponders: flag(
    "start the list's subscribe-triggered automations for this subscriber (default false); on a double opt-in list they start at confirmation",
  ),
})
export type SubscribeBodyT = Static<typeof SubscribeBody>

/**
 * Entries are checked by the service, not here: entries past the cap must not fail the call, and every bad
 * field is reported as `subscriber_data.<index>.<field>`.
 */
const bulkEntries = Type.Unknown({
  description: `array of subscriber_data objects as for subscribe; at most ${BULK_LIMIT} are read`,
})

export const SubscribeBulkBody = Type.Object({
  subscriber_data: bulkEntries,
  update_existing: flag('write the given fields onto existing contacts (default true)'),
  resubscribe: flag('bring back unsubscribed, bounced or complained addresses (default false)'),
  trigger_autoresponders: flag(
    "start the list's subscribe-triggered automations for each address newly subscribed (default false)",
  ),
})
export type SubscribeBulkBodyT = Static<typeof SubscribeBulkBody>

/**
 * Deliberately permissive: this endpoint answers validation failures with 400 (api.md), so the service
 * checks everything itself rather than the schema answering 422.
 */
export const UpdateBulkBody = Type.Object({
  subscriber_data: Type.Optional(bulkEntries),
  allow_resubscribe: Type.Optional(
    Type.Unknown({ description: 'boolean, default false: status 1 may bring back unsubscribed contacts' }),
  ),
})

export const UpdateSubscriberBody = Type.Object({
  email: Type.Optional(
    Type.String({
      description:
        "the address of the subscriber to update; when absent, subscriber_data's email names the subscriber",
    }),
  ),
  // `[]`: PHP's empty map, nothing to change.
  subscriber_data: Type.Optional(Type.Union([SubscriberData, EmptyArray])),
  allow_resubscribe: flag('status 1 may bring back an unsubscribed, bounced or complained member'),
})
export type UpdateSubscriberBodyT = Static<typeof UpdateSubscriberBody>

export const UnsubscribeBody = Type.Object({ email: Type.String() })

export const InsertsReply = Type.Object({ inserts: Type.Integer() })
export const UpdatesReply = Type.Object({ updates: Type.Integer() })

/** A 404 here is either the list (`{message}`) or the subscriber absent from it (`{errors:[...]}`). */
export const memberErrors = {
  ...commonErrors,
  404: Type.Union([
    Type.Object({ message: Type.String() }),
    Type.Object({ errors: Type.Array(Type.String()) }),
  ]),
} as const

/** 400: the field errors of api.md, or `{message}` for a body that is not JSON. */
export const bulkUpdateErrors = {
  ...commonErrors,
  400: Type.Union([FieldErrorsBody, Type.Object({ message: Type.String() })]),
} as const
