import { sql, type SQL } from 'drizzle-orm'
import type { DbHandle, Executor } from '../../core/db/client.js'
import { queryPrepared } from '../../core/db/sql.js'
import { counterIncrementsSql, eventsInsertSql, type NewEvent } from '../events/index.js'
import { webhookOutboxFromSql, webhookOutboxSql } from '../webhooks/index.js'

/** The INSERT of one event; with `source`, its row is written only when `source` (a CTE) has one. */
function eventInsertSql(e: NewEvent, source?: SQL): SQL {
  return eventsInsertSql(
    {
      accountId: sql`${e.accountId}::int`,
      messageId: sql`${e.messageId ?? null}::bigint`,
      campaignId: sql`${e.campaignId ?? 0}::int`,
      pipelineId: sql`${e.pipelineId ?? null}::int`,
      actionId: sql`${e.actionId ?? null}::text`,
      contactId: sql`${e.contactId ?? null}::int`,
      email: sql`${e.email}::text`,
      event: sql`${e.event}::text`,
      msg: sql`${e.msg ?? null}::text`,
      url: sql`${e.url ?? null}::text`,
      occurredAt: sql`${e.occurredAt.toISOString()}::timestamptz`,
    },
    source,
  )
}

/**
 * Side effect: writes one event, and in the same statement queues it for the account webhook (nothing is
 * written without one). In the caller's transaction, with the event's cause.
 */
export async function insertEvent(ex: Executor, e: NewEvent): Promise<void> {
  await ex.execute(sql`WITH outbox AS (${webhookOutboxSql([e])}) ${eventInsertSql(e)}`)
}

/** One open or click of a message that exists, as recordHits takes it. */
export interface Hit {
  messageId: number
  event: 'open' | 'click'
  url: string | null
  occurredAt: Date
  /** Its webhook message_event (the webhooks module adds what the message row knows). */
  payload: Record<string, unknown>
}

/**
 * Side effect, one statement for a whole batch of the hottest path there is (open pixels and click
 * redirects): locks the messages (in id order, so concurrent batches cannot deadlock), stamps each one's
 * first open or click, writes the events, adds to the counters (`open`/`click` only for the hit that stamped
 * the milestone, totals for every hit; shards in key order) and queues the webhook events. Atomic, so it
 * needs no transaction, and one text whatever the batch holds, so it stays prepared. Answers, per hit in
 * order, whether it was the message's first of its kind, or undefined when the message no longer exists
 * (then nothing is written for it).
 */
export async function recordHits(
  handle: DbHandle,
  hits: readonly Hit[],
): Promise<({ first: boolean } | undefined)[]> {
  const input = JSON.stringify(
    hits.map((h) => ({ m: h.messageId, k: h.event, u: h.url, t: h.occurredAt.toISOString(), p: h.payload })),
  )
  const rows = await queryPrepared<{ ord: string | number; first: boolean }>(
    handle,
    sql`WITH input AS (
          SELECT (v ->> 'm')::bigint AS message_id, v ->> 'k' AS kind, v ->> 'u' AS url,
                 (v ->> 't')::timestamptz AS at, v -> 'p' AS payload, ord
          FROM jsonb_array_elements(${input}::jsonb) WITH ORDINALITY AS j(v, ord)),
        locked AS (
          SELECT id, account_id, campaign_id, coalesce(pipeline_id, 0) AS pipeline_id,
                 coalesce(action_id, '') AS action_id, contact_id, email,
                 first_open_at IS NULL AS open_new, first_click_at IS NULL AS click_new
          FROM messages WHERE id IN (SELECT message_id FROM input)
          ORDER BY id FOR UPDATE),
        hits AS (
          SELECT i.*, l.account_id, l.campaign_id, l.pipeline_id, l.action_id, l.contact_id, l.email,
                 CASE i.kind WHEN 'open' THEN l.open_new ELSE l.click_new END
                   AND row_number() OVER (PARTITION BY i.message_id, i.kind ORDER BY i.ord) = 1 AS first
          FROM input i JOIN locked l ON l.id = i.message_id),
        stamp AS (
          UPDATE messages
          SET first_open_at = coalesce(messages.first_open_at, f.open_at),
              first_click_at = coalesce(messages.first_click_at, f.click_at)
          FROM (SELECT message_id, min(at) FILTER (WHERE kind = 'open') AS open_at,
                       min(at) FILTER (WHERE kind = 'click') AS click_at
                FROM hits WHERE first GROUP BY message_id) f
          WHERE messages.id = f.message_id),
        logged AS (${eventsInsertSql(
          {
            accountId: sql`account_id`,
            messageId: sql`message_id`,
            campaignId: sql`campaign_id`,
            pipelineId: sql`nullif(pipeline_id, 0)`,
            actionId: sql`nullif(action_id, '')`,
            contactId: sql`contact_id`,
            email: sql`email`,
            event: sql`kind`,
            url: sql`url`,
            occurredAt: sql`at`,
          },
          sql`hits ORDER BY ord`,
        )}),
        counted AS (${counterIncrementsSql({
          from: sql`hits WHERE campaign_id <> 0 OR pipeline_id <> 0`,
          scope: { campaignId: sql`campaign_id`, pipelineId: sql`pipeline_id`, actionId: sql`action_id` },
          messageId: sql`message_id`,
          deltas: {
            open: sql`count(*) FILTER (WHERE kind = 'open' AND first)`,
            total_open: sql`count(*) FILTER (WHERE kind = 'open')`,
            click: sql`count(*) FILTER (WHERE kind = 'click' AND first)`,
            total_click: sql`count(*) FILTER (WHERE kind = 'click')`,
          },
        })}),
        outbox AS (${webhookOutboxFromSql(sql`hits`)})
        SELECT ord, first FROM hits`,
  )
  const byOrd = new Map(rows.map((r) => [Number(r.ord), r.first]))
  return hits.map((_, i) => {
    const first = byOrd.get(i + 1)
    return first === undefined ? undefined : { first }
  })
}
