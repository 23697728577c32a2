import { Type, type Static } from '@sinclair/typebox'
import { isoMicro } from '../../core/http/formats.js'
import { Nullable, orBlank, PageNumber, PerPage } from '../../core/http/schemas.js'
import type { EmailLogRow } from './events.repo.js'
import type { EventType } from './events.table.js'

/** api.md "Events": the values of `event` and of the `events[]` filter. */
export const EVENT_TYPES = [
  'send',
  'open',
  'click',
  'hard_bounce',
  'soft_bounce',
  'out_of_band',
  'unsub',
  'spam',
  'spam_complaint',
] as const satisfies readonly EventType[]
// Fails to compile when events.table.ts gains a type this list lacks.
const _everyTypeListed: [Exclude<EventType, (typeof EVENT_TYPES)[number]>] extends [never] ? true : never =
  true

export const MAX_EMAIL_LOG_PAGE = 100
export const DEFAULT_EMAIL_LOG_PAGE = 20

// Plain strings here: the service checks the values, so an unknown one is reported on `events` itself rather
// than on `events.3`. The route folds `events[]`, `events[0]` and `events` into `events` before validation.
const EventFilter = Type.Array(Type.String({ maxLength: 64 }), {
  maxItems: EVENT_TYPES.length * 2,
  description: `repeatable; any of ${EVENT_TYPES.join(', ')}`,
})

export const EmailLogQuery = Type.Object({
  page: PageNumber,
  per_page: PerPage(MAX_EMAIL_LOG_PAGE, DEFAULT_EMAIL_LOG_PAGE),
  'events[]': Type.Optional(EventFilter),
  events: Type.Optional(EventFilter),
})
export type EmailLogQueryT = Static<typeof EmailLogQuery>

const EmailFilter = Type.String({
  maxLength: 254,
  description: "one recipient's events (the address as sent)",
})

/**
 * The campaign logs are in order of occurrence, newest first unless `sort_dir=asc`. `sort_by` names that order
 * (a CRM sync of Ecomail's sends `sort_by=occured_at&sort_dir=desc`; `timestamp` and `id` as the automation log
 * calls its columns, ids following occurrence); no other order is offered, so that a campaign's page stays a
 * scan of its index whichever way it runs. Before these were read any value was ignored: the names a client may
 * plausibly send still pass, and the direction in either case.
 */
export const LOG_SORT_COLUMNS = ['occured_at', 'occurred_at', 'timestamp', 'id'] as const
export const LOG_SORT_DIRECTIONS = ['asc', 'desc', 'ASC', 'DESC'] as const

/** `GET /campaigns/{id}/log`: the email log's paging and `events[]`, one recipient's events, the direction. */
export const CampaignLogQuery = Type.Composite([
  EmailLogQuery,
  Type.Object({
    email: Type.Optional(EmailFilter),
    sort_by: Type.Optional(
      orBlank(
        Type.Union(
          LOG_SORT_COLUMNS.map((c) => Type.Literal(c)),
          { description: 'the time the event occurred, the only order (any of these names)' },
        ),
      ),
    ),
    sort_dir: Type.Optional(
      orBlank(
        Type.Union(
          LOG_SORT_DIRECTIONS.map((d) => Type.Literal(d)),
          { description: 'asc or desc in either case; default desc' },
        ),
      ),
    ),
  }),
])

/** `GET /campaigns/log`: also one campaign's events (`campaign_id`, as clients of Ecomail's filter it). */
export const AccountCampaignLogQuery = Type.Composite([
  CampaignLogQuery,
  Type.Object({
    campaign_id: Type.Optional(
      orBlank(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'as GET /campaigns/{id}/log' })),
    ),
  }),
])
export type CampaignLogQueryT = Static<typeof AccountCampaignLogQuery>

/** api.md "Email log entry"; `occured_at` is spelled as the wire has it. */
export const EmailLogEntry = Type.Object({
  campaign_id: Type.Integer({ description: '0 for transactional and automation mail' }),
  autoresponder_id: Nullable(Type.Integer({ description: 'automation (pipeline) id' })),
  action_id: Nullable(Type.String()),
  event: Type.String({ description: EVENT_TYPES.join(', ') }),
  msg: Nullable(Type.String()),
  url: Nullable(Type.String()),
  email: Type.String(),
  occured_at: Type.String({ description: 'ISO 8601 UTC with microseconds' }),
  mail_name: Nullable(Type.String()),
})

export function toEmailLogEntry(row: EmailLogRow): Static<typeof EmailLogEntry> {
  return {
    campaign_id: row.campaign_id,
    autoresponder_id: row.pipeline_id,
    action_id: row.action_id,
    event: row.event,
    msg: row.msg,
    url: row.url,
    email: row.email,
    occured_at: isoMicro(row.occurred_at),
    mail_name: row.mail_name,
  }
}
