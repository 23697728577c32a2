import { eq, sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryRows } from '../../core/db/sql.js'
import { webhookBatches } from './webhooks.table.js'

const ts = (d: Date) => sql`${d.toISOString()}::timestamptz`

/**
 * Moves up to `maxEvents` queued events into batches of at most `perBatch` events per account, in one
 * statement (so an event is either still queued or in exactly one batch). A batch's body is fixed here: every
 * retry sends the same bytes under the same id. Concurrent workers skip each other's rows. Returns how many
 * batches were formed.
 */
export async function formBatches(
  ex: Executor,
  now: Date,
  maxEvents: number,
  perBatch: number,
): Promise<number> {
  // Side effects: DELETE from webhook_outbox, INSERT into webhook_batches.
  const rows = await queryRows<{ id: string }>(
    ex,
    sql`
    WITH picked AS (
      SELECT id FROM webhook_outbox ORDER BY id LIMIT ${maxEvents} FOR UPDATE SKIP LOCKED
    ), taken AS (
      DELETE FROM webhook_outbox o USING picked p WHERE o.id = p.id
      RETURNING o.id, o.account_id, o.payload
    ), numbered AS (
      SELECT id, account_id, payload,
             (row_number() OVER (PARTITION BY account_id ORDER BY id) - 1) / ${perBatch} AS chunk
      FROM taken
    )
    INSERT INTO webhook_batches (id, account_id, body, events, attempts, next_attempt_at, created_at)
    SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), account_id,
           jsonb_agg(jsonb_build_object('msys', jsonb_build_object('message_event',
             payload || jsonb_build_object('event_id', id::text))) ORDER BY id)::text,
           count(*)::int, 0, ${ts(now)}, ${ts(now)}
    FROM numbered
    GROUP BY account_id, chunk
    RETURNING id`,
  )
  return rows.length
}

export interface ClaimedBatch {
  id: string
  account_id: number
  body: string
  /** Including the one about to be made. */
  attempts: number
  created_at: Date
  url: string
  secret: string
}

/**
 * Claims up to `limit` due batches of enabled webhooks: `next_attempt_at` moves to `leaseUntil`, so no other
 * worker takes them while they are in flight, and a worker that dies mid-send leaves them due again then.
 */
export async function claimDueBatches(
  ex: Executor,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<ClaimedBatch[]> {
  // Batches whose webhook was removed or disabled meanwhile would stay due for ever: drop them first.
  await ex.execute(sql`
    DELETE FROM webhook_batches b
    WHERE b.next_attempt_at <= ${ts(now)}
      AND NOT EXISTS (SELECT 1 FROM account_webhooks w
                      WHERE w.account_id = b.account_id AND w.disabled_at IS NULL)`)
  const rows = await queryRows<ClaimedBatch>(
    ex,
    sql`
    UPDATE webhook_batches b
    SET attempts = b.attempts + 1, next_attempt_at = ${ts(leaseUntil)}
    FROM account_webhooks w
    WHERE b.id IN (SELECT id FROM webhook_batches
                   WHERE next_attempt_at <= ${ts(now)}
                   ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      AND w.account_id = b.account_id AND w.disabled_at IS NULL
    RETURNING b.id, b.account_id, b.body, b.attempts, b.created_at, w.url, w.secret`,
  )
  return rows.map((r) => ({ ...r, created_at: new Date(r.created_at) }))
}

export async function deleteBatch(ex: Executor, id: string): Promise<void> {
  await ex.delete(webhookBatches).where(eq(webhookBatches.id, id))
}

export async function rescheduleBatch(ex: Executor, id: string, at: Date, error: string): Promise<void> {
  await ex
    .update(webhookBatches)
    .set({ nextAttemptAt: at, lastError: error.slice(0, 500) })
    .where(eq(webhookBatches.id, id))
}
