import { sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import type { EventType } from './events.table.js'
import { couponMissNote } from '../coupons/index.js'

export interface NewEvent {
  accountId: number
  messageId?: number | null
  campaignId?: number
  pipelineId?: number | null
  actionId?: string | null
  contactId?: number | null
  email: string
  event: EventType
  msg?: string | null
  url?: string | null
  occurredAt: Date
}

/** An event row's columns as SQL expressions over what an INSERT selects from; `msg` and `url` are NULL unless given. */
export interface EventColumns {
  accountId: SQL
  messageId: SQL
  campaignId: SQL
  pipelineId: SQL
  actionId: SQL
  contactId: SQL
  email: SQL
  event: SQL
  occurredAt: SQL
  msg?: SQL
  url?: SQL
}

/**
 * The one INSERT of event rows (the events table's SQL has this owner, as the counters have counterIncrementsSql):
 * each column selected as given, `FROM from` when given (a CTE of the statement it sits in, with an ORDER BY if
 * the order matters), and `tail` after it (a RETURNING). Whoever records what happened to mail composes it into
 * their statement: the ledger's marking (`send`), the outcomes module (every other event).
 */
export function eventsInsertSql(c: EventColumns, from?: SQL, tail: SQL = sql``): SQL {
  return sql`INSERT INTO events (account_id, message_id, campaign_id, pipeline_id, action_id, contact_id, email,
                                 event, msg, url, occurred_at)
    SELECT ${c.accountId}, ${c.messageId}, ${c.campaignId}, ${c.pipelineId}, ${c.actionId}, ${c.contactId},
           ${c.email}, ${c.event}, ${c.msg ?? sql`NULL::text`}, ${c.url ?? sql`NULL::text`}, ${c.occurredAt}
    ${from ? sql`FROM ${from}` : sql``} ${tail}`
}

export interface EmailLogRow {
  campaign_id: number
  pipeline_id: number | null
  action_id: string | null
  event: EventType
  msg: string | null
  url: string | null
  email: string
  occurred_at: Date
  mail_name: string | null
}

/**
 * The log's `mail_name`: a campaign's mail is named by the campaign's title (its stored subject still holds
 * the unrendered merge tags); other mail by its subject. Needs `m` (messages) and `c` (campaigns) joined.
 */
const mailName = sql`coalesce(c.title, m.subject) AS mail_name`

/**
 * The log's `msg`: as recorded, and on a `send` whose `*|COUPON:n|*` found its folder empty (a
 * coupon_misses row of the message, written before it was sent) a sentence that says so, so the person
 * who asks why their mail had no code finds it in that mail's log. Needs `e` (events).
 */
const logMsg = sql`coalesce(e.msg, CASE WHEN e.event = 'send' THEN ${couponMissNote(sql`e.message_id`)} END) AS msg`

/** The email log of one address, newest first (api.md `GET /subscribers/{email}/email-log`). */
export async function emailLogPage(
  ex: Executor,
  accountId: number,
  email: string,
  types: EventType[] | null,
  limit: number,
  offset: number,
): Promise<{ rows: EmailLogRow[]; total: number }> {
  const filter = types
    ? sql`AND e.event IN (SELECT jsonb_array_elements_text(${JSON.stringify(types)}::jsonb))`
    : sql``
  const rows = await queryRows<EmailLogRow>(
    ex,
    sql`SELECT e.campaign_id, e.pipeline_id, e.action_id, e.event, ${logMsg}, e.url, e.email,
               e.occurred_at, ${mailName}
        FROM events e LEFT JOIN messages m ON m.id = e.message_id
             LEFT JOIN campaigns c ON c.id = e.campaign_id
        WHERE e.account_id = ${accountId} AND e.email = ${email} ${filter}
        ORDER BY e.occurred_at DESC, e.id DESC
        LIMIT ${limit} OFFSET ${offset}`,
  )
  const count = await queryOne<{ n: number }>(
    ex,
    sql`SELECT count(*)::int AS n FROM events e WHERE e.account_id = ${accountId} AND e.email = ${email} ${filter}`,
  )
  return { rows: rows.map((r) => ({ ...r, occurred_at: new Date(r.occurred_at) })), total: count?.n ?? 0 }
}

/**
 * GDPR erasure: the address disappears from every log of the account, replaced by a stable pseudonym; the
 * person's values kept for rendering their mail again (the web version, the click page: name, vokativ, a
 * confirmation mail's every field) go with it.
 */
export async function pseudonymiseAddress(ex: Executor, accountId: number, email: string, pseudonym: string) {
  await ex.execute(
    sql`UPDATE events SET email = ${pseudonym} WHERE account_id = ${accountId} AND email = ${email}`,
  )
  await ex.execute(sql`UPDATE messages SET email = ${pseudonym}, html = NULL, vars = NULL, recipient_name = ''
                       WHERE account_id = ${accountId} AND email = ${email}`)
}

export type CampaignLogRow = EmailLogRow & { id: number }

/**
 * Campaign mail events of the account, newest or oldest first (`GET /campaigns/{id}/log`, `GET /campaigns/log`):
 * of one campaign, or of every campaign when `campaignId` is null; of one recipient when `email` is given.
 * One campaign's page is the merge of one scan of `events_campaign_idx` per event type (backward for newest
 * first), each stopping after `offset + limit` rows, so the first pages of a campaign with millions of events
 * read only what they show. The caller has checked that the campaign is the account's (campaign ids are unique
 * across accounts), so the campaign's own queries need no account column, and its count stays an index-only
 * scan. One recipient's events are few: they are read through `events_account_email_idx`, whatever the campaign.
 */
export async function campaignEventsPage(
  ex: Executor,
  accountId: number,
  { campaignId, email }: { campaignId: number | null; email: string | null },
  types: readonly EventType[],
  oldestFirst: boolean,
  { perPage: limit, offset }: { perPage: number; offset: number },
): Promise<{ rows: CampaignLogRow[]; total: number }> {
  const wanted = JSON.stringify(types)
  // One of two fixed words, never a caller's text.
  const dir = sql.raw(oldestFirst ? 'ASC' : 'DESC')
  const columns = sql`e.id, e.campaign_id, e.pipeline_id, e.action_id, e.event, ${logMsg}, e.url, e.email,
                      e.occurred_at, ${mailName}`
  const ofCampaign = campaignId === null ? sql`e.campaign_id <> 0` : sql`e.campaign_id = ${campaignId}`
  const scope =
    email !== null
      ? sql`e.account_id = ${accountId} AND e.email = ${email} AND ${ofCampaign}`
      : campaignId === null
        ? sql`e.account_id = ${accountId} AND ${ofCampaign}`
        : sql`${ofCampaign}`
  const rows =
    campaignId === null || email !== null
      ? await queryRows<CampaignLogRow>(
          ex,
          sql`SELECT ${columns}
              FROM events e LEFT JOIN messages m ON m.id = e.message_id
                   LEFT JOIN campaigns c ON c.id = e.campaign_id
              WHERE ${scope} AND e.event IN (SELECT jsonb_array_elements_text(${wanted}::jsonb))
              ORDER BY e.occurred_at ${dir}, e.id ${dir}
              LIMIT ${limit} OFFSET ${offset}`,
        )
      : await queryRows<CampaignLogRow>(
          ex,
          sql`SELECT ${columns}
              FROM jsonb_array_elements_text(${wanted}::jsonb) AS t(type)
              CROSS JOIN LATERAL (
                SELECT * FROM events
                WHERE campaign_id = ${campaignId} AND event = t.type
                ORDER BY occurred_at ${dir}, id ${dir}
                LIMIT ${offset + limit}) e
              LEFT JOIN messages m ON m.id = e.message_id
              LEFT JOIN campaigns c ON c.id = e.campaign_id
              ORDER BY e.occurred_at ${dir}, e.id ${dir}
              LIMIT ${limit} OFFSET ${offset}`,
        )
  const count = await queryOne<{ n: number }>(
    ex,
    sql`SELECT count(*)::int AS n FROM events e
        WHERE ${scope} AND e.event IN (SELECT jsonb_array_elements_text(${wanted}::jsonb))`,
  )
  return {
    rows: rows.map((r) => ({ ...r, id: Number(r.id), occurred_at: new Date(r.occurred_at) })),
    total: count?.n ?? 0,
  }
}
