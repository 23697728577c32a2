import { sql, type SQL } from 'drizzle-orm'
import type { DbHandle, Executor } from '../../core/db/client.js'
import { queryOne, queryPrepared, queryRows } from '../../core/db/sql.js'
import { milestoneCtes, type Milestone } from '../messages/index.js'
import { webhookOutboxSql } from '../webhooks/index.js'
import { counterUpsertSql, type CounterName } from './counters.repo.js'
import type { EventType } from './events.table.js'

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

/** The INSERT of one event; with `source`, its row is written only when `source` (a CTE) has one. */
function eventInsertSql(e: NewEvent, source?: SQL): SQL {
  return sql`INSERT INTO events (account_id, message_id, campaign_id, pipeline_id, action_id, contact_id, email,
                                 event, msg, url, occurred_at)
    SELECT ${e.accountId}::int, ${e.messageId ?? null}::bigint, ${e.campaignId ?? 0}::int,
           ${e.pipelineId ?? null}::int, ${e.actionId ?? null}::text, ${e.contactId ?? null}::int, ${e.email}::text,
           ${e.event}::text, ${e.msg ?? null}::text, ${e.url ?? null}::text, ${e.occurredAt.toISOString()}::timestamptz
    ${source ? sql`FROM ${source}` : sql``}`
}

/**
 * Side effect: writes one event, and in the same statement queues it for the account webhook (nothing is
 * written without one). In the caller's transaction, with the event's cause.
 */
export async function insertEvent(ex: Executor, e: NewEvent): Promise<void> {
  await ex.execute(sql`WITH outbox AS (${webhookOutboxSql([e])}) ${eventInsertSql(e)}`)
}

/**
 * Side effect, one statement for the hottest path there is (open pixels and click redirects): stamps the
 * message's milestone, writes the event, adds to its counters (`unique` only the first time) and queues the
 * webhook event. Atomic on its own, so it needs no transaction: one round trip instead of six, and
 * prepared, so PostgreSQL does not plan the whole statement again for every hit. Undefined
 * when the message no longer exists (then nothing is written).
 */
export async function recordHit(
  handle: DbHandle,
  e: NewEvent & { messageId: number },
  milestone: Milestone,
  counters: { unique: CounterName; total: CounterName },
): Promise<{ first: boolean } | undefined> {
  const scope = { campaignId: e.campaignId ?? 0, pipelineId: e.pipelineId, actionId: e.actionId }
  const count = counterUpsertSql(
    scope,
    e.messageId,
    { [counters.unique]: sql`CASE WHEN stamp.first THEN 1 ELSE 0 END`, [counters.total]: 1 },
    sql`stamp`,
  )
  const [row] = await queryPrepared<{ first: boolean }>(
    handle,
    sql`WITH ${milestoneCtes(e.messageId, milestone, e.occurredAt)},
          logged AS (${eventInsertSql(e, sql`stamp`)}),
          outbox AS (${webhookOutboxSql([e], sql`EXISTS (SELECT 1 FROM stamp)`)})
          ${count ? sql`, counted AS (${count})` : sql``}
        SELECT first FROM stamp`,
  )
  return row && { first: row.first }
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
    sql`SELECT e.campaign_id, e.pipeline_id, e.action_id, e.event, e.msg, e.url, e.email,
               e.occurred_at, m.subject AS mail_name
        FROM events e LEFT JOIN messages m ON m.id = e.message_id
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

/** GDPR erasure: the address disappears from every log of the account, replaced by a stable pseudonym. */
export async function pseudonymiseAddress(ex: Executor, accountId: number, email: string, pseudonym: string) {
  await ex.execute(
    sql`UPDATE events SET email = ${pseudonym} WHERE account_id = ${accountId} AND email = ${email}`,
  )
  await ex.execute(sql`UPDATE messages SET email = ${pseudonym}, html = NULL
                       WHERE account_id = ${accountId} AND email = ${email}`)
}

export type CampaignLogRow = EmailLogRow & { id: number }

/**
 * Campaign mail events of the account, newest first (`GET /campaigns/{id}/log`, `GET /campaigns/log`):
 * of one campaign, or of every campaign when `campaignId` is null. One campaign's page is the merge of one
 * backward scan of `events_campaign_idx` per event type, each stopping after `offset + limit` rows, so the
 * first pages of a campaign with millions of events read only what they show. The caller has checked that
 * the campaign is the account's (campaign ids are unique across accounts), so the campaign's own queries need
 * no account column, and its count stays an index-only scan.
 */
export async function campaignEventsPage(
  ex: Executor,
  accountId: number,
  campaignId: number | null,
  types: readonly EventType[],
  limit: number,
  offset: number,
): Promise<{ rows: CampaignLogRow[]; total: number }> {
  const wanted = JSON.stringify(types)
  const columns = sql`e.id, e.campaign_id, e.pipeline_id, e.action_id, e.event, e.msg, e.url, e.email,
                      e.occurred_at, m.subject AS mail_name`
  const rows =
    campaignId === null
      ? await queryRows<CampaignLogRow>(
          ex,
          sql`SELECT ${columns}
              FROM events e LEFT JOIN messages m ON m.id = e.message_id
              WHERE e.account_id = ${accountId} AND e.campaign_id <> 0
                AND e.event IN (SELECT jsonb_array_elements_text(${wanted}::jsonb))
              ORDER BY e.occurred_at DESC, e.id DESC
              LIMIT ${limit} OFFSET ${offset}`,
        )
      : await queryRows<CampaignLogRow>(
          ex,
          sql`SELECT ${columns}
              FROM jsonb_array_elements_text(${wanted}::jsonb) AS t(type)
              CROSS JOIN LATERAL (
                SELECT * FROM events
                WHERE campaign_id = ${campaignId} AND event = t.type
                ORDER BY occurred_at DESC, id DESC
                LIMIT ${offset + limit}) e
              LEFT JOIN messages m ON m.id = e.message_id
              ORDER BY e.occurred_at DESC, e.id DESC
              LIMIT ${limit} OFFSET ${offset}`,
        )
  const scope =
    campaignId === null
      ? sql`account_id = ${accountId} AND campaign_id <> 0`
      : sql`campaign_id = ${campaignId}`
  const count = await queryOne<{ n: number }>(
    ex,
    sql`SELECT count(*)::int AS n FROM events
        WHERE ${scope} AND event IN (SELECT jsonb_array_elements_text(${wanted}::jsonb))`,
  )
  return {
    rows: rows.map((r) => ({ ...r, id: Number(r.id), occurred_at: new Date(r.occurred_at) })),
    total: count?.n ?? 0,
  }
}
