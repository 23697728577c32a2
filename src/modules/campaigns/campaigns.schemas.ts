import { Type, type Static } from '@sinclair/typebox'
import { sqlDateTime } from '../../core/http/formats.js'
import { Nullable, orBlank, OrNull, PageNumber, PerPage } from '../../core/http/schemas.js'
import { CAMPAIGN_ERROR_CODES, campaignErrorOf } from './campaign-errors.js'
import { CampaignDetailStats } from './campaign-stats.schemas.js'
import type { campaigns, CampaignTargets } from './campaigns.table.js'

export type CampaignRow = typeof campaigns.$inferSelect

// ---- GET /campaigns query (contract §4) -------------------------------------------------------------------

export const CAMPAIGN_SORTS = ['id', 'sent_at', 'changed_at', 'title', 'status'] as const
export type CampaignSort = (typeof CAMPAIGN_SORTS)[number]
export const MAX_CAMPAIGN_PAGE = 100
export const DEFAULT_CAMPAIGN_PAGE = 20

const ID_MAX = 2147483647
const DAY_PATTERN = '^\\d{4}-\\d{2}-\\d{2}$'
const Day = (description: string) => Type.String({ pattern: DAY_PATTERN, description })

/**
 * Fastify's query parser keeps bracketed names as they are, so `filters[title]=x` (PHP's `filters%5Btitle%5D`
 * included) arrives as the flat key `filters[title]`, and a 422 names the parameter exactly as it was sent.
 */
export const CampaignListQuery = Type.Object({
  page: PageNumber,
  per_page: PerPage(MAX_CAMPAIGN_PAGE, DEFAULT_CAMPAIGN_PAGE),
  sort_by: Type.Optional(
    Type.Union(
      CAMPAIGN_SORTS.map((s) => Type.Literal(s)),
      { default: 'id', description: CAMPAIGN_SORTS.join(', ') },
    ),
  ),
  sort_dir: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc' })),
  'filters[title]': Type.Optional(Type.String({ maxLength: 255, description: 'title contains (any case)' })),
  'filters[subject]': Type.Optional(
    Type.String({ maxLength: 998, description: 'subject contains (any case)' }),
  ),
  'filters[status]': Type.Optional(orBlank(Type.Integer({ minimum: 0, maximum: 32767 }))),
  'filters[updated_at]': Type.Optional(orBlank(Day('YYYY-MM-DD: last changed on that day (UTC)'))),
  'filters[date_from]': Type.Optional(orBlank(Day('YYYY-MM-DD: sent on or after that day (UTC)'))),
  'filters[date_to]': Type.Optional(orBlank(Day('YYYY-MM-DD: sent on or before that day (UTC)'))),
  'filters[id]': Type.Optional(orBlank(Type.Integer({ minimum: 1, maximum: ID_MAX }))),
  filters: Type.Optional(
    Type.String({
      maxLength: 4000,
      description:
        'the same filters as one JSON object (what ecomail-php sends), e.g. `{"status":3,"title":"x"}`; ' +
        'a `filters[name]` parameter given beside it wins',
    }),
  ),
})
export type CampaignListQueryT = Static<typeof CampaignListQuery>

/** The filter names of contract §4, as they appear inside `filters[...]`. */
export const CAMPAIGN_FILTERS = [
  'title',
  'subject',
  'status',
  'updated_at',
  'date_from',
  'date_to',
  'id',
] as const

// ---- POST / PUT body --------------------------------------------------------------------------------------

const HTML_MAX = 4_000_000
const ListIds = Type.Array(Type.Integer({ minimum: 1, maximum: ID_MAX }), { maxItems: 1000 })
const SegmentTarget = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100, description: 'segment id' }),
  list: Type.Integer({ minimum: 1, maximum: ID_MAX, description: 'the list the segment belongs to' }),
})

/** api.md: "array of list ids, or an object with segments". */
export const RecipientListsInput = Type.Union(
  [
    ListIds,
    Type.Object({
      lists: Type.Optional(ListIds),
      segments: Type.Optional(Type.Array(SegmentTarget, { maxItems: 1000 })),
    }),
  ],
  {
    description:
      '[list ids] or {"lists": [list ids], "segments": [{"id": "<segment id>", "list": <list id>}]}',
  },
)
export type RecipientListsInputT = Static<typeof RecipientListsInput>

/** The optional fields may be null (OrNull); the service reads null, '' and a template_id of 0 alike as "none". */
export const CampaignBody = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 255 }),
  // Required, but may be empty: sending then takes the field from the campaign's lists.
  from_name: Type.String({ maxLength: 255, description: "empty: the first target list's from_name" }),
  from_email: Type.String({ maxLength: 254, description: "empty: the first target list's from_email" }),
  reply_to: Type.String({ maxLength: 254, description: "empty: the first target list's reply_to" }),
  subject: Type.String({ minLength: 1, maxLength: 998 }),
  html_text: Type.String({ minLength: 1, maxLength: HTML_MAX }),
  recepient_lists: RecipientListsInput,
  plain_text: Type.Optional(OrNull(Type.String({ maxLength: HTML_MAX }))),
  template_id: Type.Optional(
    OrNull(
      Type.Integer({
        minimum: 0,
        maximum: ID_MAX,
        description: "the account's template; 0 or null for none",
      }),
    ),
  ),
  scheduled_at: Type.Optional(
    OrNull(
      Type.String({
        maxLength: 100,
        description:
          'YYYY-MM-DD HH:MM:SS (UTC), stored only: the campaign stays a draft until POST /campaigns/{id}/schedule',
      }),
    ),
  ),
})
export type CampaignBodyT = Static<typeof CampaignBody>

// ---- Responses --------------------------------------------------------------------------------------------

const DateTime = (description: string) =>
  Nullable(Type.String({ description: `YYYY-MM-DD HH:MM:SS (UTC); ${description}` }))

/** Contract §4: why a campaign is errored; null in every status but 4. */
const CampaignErrorField = Nullable(
  Type.Object({
    code: Type.Union(
      CAMPAIGN_ERROR_CODES.map((c) => Type.Literal(c)),
      { description: CAMPAIGN_ERROR_CODES.join(', ') },
    ),
    message: Type.String({ description: 'one sentence saying what to do' }),
  }),
)

const listItemFields = {
  id: Type.Integer(),
  from_name: Type.String(),
  from_email: Type.String(),
  reply_to: Type.String(),
  title: Type.String(),
  subject: Type.String(),
  sent_at: DateTime('when sending started; null before'),
  recipients: Type.Integer({ description: 'frozen when sending starts; 0 before' }),
  status: Type.Integer({ description: '0 draft, 7 scheduled, 1 preparing, 2 sending, 3 sent, 4 errored' }),
  scheduled_at: DateTime('null when not scheduled'),
  template_id: Type.Integer({ description: '0 when none' }),
  archive_url: Type.String({ description: 'public web version of the campaign' }),
  error: CampaignErrorField,
}

/** api.md "Campaign (list item)". */
export const CampaignListItem = Type.Object(listItemFields)
export type CampaignListItemT = Static<typeof CampaignListItem>

export const RecipientLists = Type.Object({
  lists: Type.Array(Type.Integer()),
  segments: Type.Array(Type.Object({ id: Type.String(), list: Type.Integer() })),
})

/**
 * What POST and PUT return: api.md's PUT fields (id, from_name, from_email, reply_to, title, subject, status,
 * archive_url) within the list item, plus the targets as stored.
 */
export const CampaignSaved = Type.Object({ ...listItemFields, recepient_lists: RecipientLists })

/** api.md "Campaign (detail)", plus the content (html_text, plain_text) a client needs to edit it. */
export const CampaignDetail = Type.Object({
  ...listItemFields,
  recepient_lists: RecipientLists,
  html_text: Type.String(),
  plain_text: Nullable(Type.String()),
  stats: CampaignDetailStats,
})

/** The columns a list item needs: the list reads these only, never the (possibly large) HTML. */
export type CampaignListRow = Pick<
  CampaignRow,
  | 'id'
  | 'fromName'
  | 'fromEmail'
  | 'replyTo'
  | 'title'
  | 'subject'
  | 'sentAt'
  | 'recipients'
  | 'status'
  | 'scheduledAt'
  | 'templateId'
  | 'error'
  | 'errorCode'
>

export function toCampaignListItem(row: CampaignListRow, archiveUrl: string): CampaignListItemT {
  return {
    id: row.id,
    from_name: row.fromName,
    from_email: row.fromEmail,
    reply_to: row.replyTo,
    title: row.title,
    subject: row.subject,
    sent_at: sqlDateTime(row.sentAt),
    recipients: row.recipients,
    status: row.status,
    scheduled_at: sqlDateTime(row.scheduledAt),
    template_id: row.templateId ?? 0,
    archive_url: archiveUrl,
    error: campaignErrorOf(row),
  }
}

export function toRecipientLists(targets: CampaignTargets): Static<typeof RecipientLists> {
  return {
    lists: [...targets.lists],
    segments: targets.segments.map((s) => ({ id: s.id, list: s.list })),
  }
}

export function toCampaignSaved(row: CampaignRow, archiveUrl: string): Static<typeof CampaignSaved> {
  return { ...toCampaignListItem(row, archiveUrl), recepient_lists: toRecipientLists(row.targets) }
}

export function toCampaignDetail(
  row: CampaignRow,
  archiveUrl: string,
  stats: Static<typeof CampaignDetailStats>,
): Static<typeof CampaignDetail> {
  return {
    ...toCampaignSaved(row, archiveUrl),
    html_text: row.htmlText,
    plain_text: row.plainText,
    stats,
  }
}
