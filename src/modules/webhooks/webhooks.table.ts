import { bigserial, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

/** The one account-wide webhook (api.md "Webhooks"); the secret signs every delivery (Standard Webhooks). */
export const accountWebhooks = pgTable('account_webhooks', {
  accountId: integer('account_id').primaryKey(),
  url: text('url').notNull(),
  /** `whsec_` + base64 of 32 random bytes; shown by GET, never logged. */
  secret: text('secret').notNull(),
  /** Set when the receiver answered 410 Gone: nothing is queued for it until the URL is posted again. */
  disabledAt: timestamp('disabled_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
})

/**
 * Events waiting to be batched, written in the transaction of their cause (an outbox), so a crash after the
 * commit still delivers them. `payload` is the `message_event` object without its `event_id`, which the
 * batcher adds from `id`.
 */
export const webhookOutbox = pgTable('webhook_outbox', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  accountId: integer('account_id').notNull(),
  payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
})

/**
 * One POST to a receiver: its events are fixed when the batch is formed, so every retry carries the same body
 * and the same `webhook-id` (= `id`). `next_attempt_at` is both the retry time and the lease of a batch in
 * flight: a worker that dies mid-send leaves it due again once the lease runs out.
 */
export const webhookBatches = pgTable(
  'webhook_batches',
  {
    id: text('id').primaryKey(),
    accountId: integer('account_id').notNull(),
    /** The JSON array sent as the body, kept as text so every retry is byte-identical (and so its signature). */
    body: text('body').notNull(),
    events: integer('events').notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull(),
    /** Retries stop 24 h after this. */
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    lastError: text('last_error'),
  },
  (t) => [
    index('webhook_batches_due_idx').on(t.nextAttemptAt),
    index('webhook_batches_account_idx').on(t.accountId),
  ],
)
