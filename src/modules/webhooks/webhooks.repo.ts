import { eq, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryRows } from '../../core/db/sql.js'
import { accountWebhooks, webhookBatches, webhookOutbox } from './webhooks.table.js'

export type WebhookRow = typeof accountWebhooks.$inferSelect

const ts = (d: Date) => sql`${d.toISOString()}::timestamptz`

export async function findWebhook(ex: Executor, accountId: number): Promise<WebhookRow | undefined> {
  const [row] = await ex.select().from(accountWebhooks).where(eq(accountWebhooks.accountId, accountId))
  return row
}

/**
 * An account's webhook row `w` takes events: the one condition the outbox INSERT and accountsWithWebhook share,
 * so that a sender that skips reading events back for an account skips exactly those the outbox would drop.
 */
const takesEvents = sql`w.disabled_at IS NULL`

/** Of these accounts, those with an enabled webhook: the ones whose events the outbox takes. */
export async function accountsWithWebhook(ex: Executor, accountIds: readonly number[]): Promise<number[]> {
  if (accountIds.length === 0) return []
  const rows = await queryRows<{ account_id: number }>(
    ex,
    sql`SELECT w.account_id FROM account_webhooks w
        WHERE ${takesEvents}
          AND w.account_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(accountIds)}::jsonb)::int)`,
  )
  return rows.map((r) => r.account_id)
}

/**
 * Sets the account's URL (enabled again if a 410 had disabled it). The secret given is used when the webhook
 * is new or its URL changes; posting the same URL again keeps the secret the receiver already verifies with.
 */
export async function upsertWebhook(
  ex: Executor,
  accountId: number,
  url: string,
  secret: string,
  now: Date,
): Promise<void> {
  await ex.execute(sql`
    INSERT INTO account_webhooks (account_id, url, secret, disabled_at, created_at, updated_at)
    VALUES (${accountId}, ${url}, ${secret}, NULL, ${ts(now)}, ${ts(now)})
    ON CONFLICT (account_id) DO UPDATE SET
      url = excluded.url,
      secret = CASE WHEN account_webhooks.url = excluded.url THEN account_webhooks.secret ELSE excluded.secret END,
      disabled_at = NULL,
      updated_at = excluded.updated_at`)
}

/** Drops whatever still waits for the account's receiver: it is gone or no longer wanted. */
export async function dropPending(ex: Executor, accountId: number): Promise<void> {
  await ex.delete(webhookOutbox).where(eq(webhookOutbox.accountId, accountId))
  await ex.delete(webhookBatches).where(eq(webhookBatches.accountId, accountId))
}

/** Removes the webhook; true when there was one. */
export async function deleteWebhook(ex: Executor, accountId: number): Promise<boolean> {
  const gone = await ex
    .delete(accountWebhooks)
    .where(eq(accountWebhooks.accountId, accountId))
    .returning({ id: accountWebhooks.accountId })
  return gone.length > 0
}

/** The receiver answered 410 Gone: nothing more is queued for it until the URL is posted again. */
export async function disableWebhook(ex: Executor, accountId: number, now: Date): Promise<void> {
  await ex.update(accountWebhooks).set({ disabledAt: now }).where(eq(accountWebhooks.accountId, accountId))
}

export interface OutboxEvent {
  accountId: number
  messageId: number | null
  /** The message_event object; subject, transmission_id and rcpt_meta.subaccount are added here. */
  payload: Record<string, unknown>
}

/**
 * Queues events for the accounts' webhooks in ONE statement that writes nothing for an account without an
 * enabled webhook: it sits on the hot path of tracking hits and campaign batches, inside their transactions.
 * The webhook row is the driving side (a primary-key probe), so without one the events are never even
 * unpacked. The subject and transactional batch id come from the message row, the account name from the
 * account.
 */
export async function insertOutboxEvents(ex: Executor, rows: readonly OutboxEvent[]): Promise<void> {
  if (rows.length > 0) await ex.execute(outboxInsertSql(rows))
}

/**
 * The INSERT of insertOutboxEvents, for callers that fold it into a statement of their own (a CTE).
 * `onlyIf` guards it with a condition of that statement (e.g. that the event itself was written).
 */
export function outboxInsertSql(rows: readonly OutboxEvent[], onlyIf?: SQL): SQL {
  const json = JSON.stringify(rows.map((r) => ({ a: r.accountId, m: r.messageId, p: r.payload })))
  return outboxInsertFromSql(
    sql`(SELECT (v ->> 'a')::int AS account_id, (v ->> 'm')::bigint AS message_id, v -> 'p' AS payload, ord
         FROM jsonb_array_elements(${json}::jsonb) WITH ORDINALITY AS j(v, ord))`,
    onlyIf,
  )
}

/**
 * The INSERT of the events a relation of the caller's statement holds, with columns `account_id`,
 * `message_id`, `payload` (the message_event object) and `ord` (their order): for statements that gather
 * many events at once, such as a batch of tracking hits. Events of accounts without an enabled webhook are
 * left out here, so callers need not know whether there is one.
 */
export function outboxInsertFromSql(source: SQL, onlyIf?: SQL): SQL {
  // Side effect: INSERT into webhook_outbox (nothing when no enabled webhook matches).
  return sql`
    INSERT INTO webhook_outbox (account_id, payload)
    SELECT w.account_id,
           x.payload
             || jsonb_build_object('subject', coalesce(m.subject, ''))
             -- A campaign's test copy has a body row of its own, but no API call (transmission) sent it.
             || CASE WHEN m.batch_id IS NULL OR m.kind = 'test' THEN '{}'::jsonb
                     ELSE jsonb_build_object('transmission_id', m.batch_id::text) END
             || jsonb_build_object('rcpt_meta',
                  coalesce(x.payload -> 'rcpt_meta', '{}'::jsonb) || jsonb_build_object('subaccount', a.name))
    FROM ${source} x
    JOIN account_webhooks w ON w.account_id = x.account_id AND ${takesEvents}
    JOIN accounts a ON a.id = w.account_id
    LEFT JOIN messages m ON m.id = x.message_id
    ${onlyIf ? sql`WHERE ${onlyIf}` : sql``}
    ORDER BY x.ord`
}
