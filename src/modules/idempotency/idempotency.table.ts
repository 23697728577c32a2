import { integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'

/** First response to a POST carrying an Idempotency-Key, replayed for 24 h (contract §1). */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    accountId: integer('account_id').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    /** Null while the first request is still running. */
    statusCode: integer('status_code'),
    responseBody: text('response_body'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] })],
)
