import { sql } from 'drizzle-orm'
import { bigint, bigserial, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

export type EventType =
  | 'send'
  | 'open'
  | 'click'
  | 'hard_bounce'
  | 'soft_bounce'
  | 'out_of_band'
  | 'unsub'
  | 'spam'
  | 'spam_complaint'

/** Everything that happened to mail (api.md "Events"): the email log reads it, statistics count it. */
export const events = pgTable(
  'events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    accountId: integer('account_id').notNull(),
    messageId: bigint('message_id', { mode: 'number' }),
    campaignId: integer('campaign_id').notNull().default(0),
    pipelineId: integer('pipeline_id'),
    actionId: text('action_id'),
    contactId: integer('contact_id'),
    email: text('email').notNull(),
    event: text('event').$type<EventType>().notNull(),
    msg: text('msg'),
    url: text('url'),
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('events_account_email_idx').on(t.accountId, t.email, t.occurredAt),
    index('events_message_idx').on(t.messageId),
    index('events_campaign_idx').on(t.campaignId, t.event, t.occurredAt),
    // GET /campaigns/log and a campaign's log: newest first.
    index('events_account_time_idx').on(t.accountId, t.occurredAt),
    // Automation statistics: a pipeline's opens, clicks and sends within a date range (automation mail only).
    index('events_pipeline_idx')
      .on(t.pipelineId, t.event, t.occurredAt)
      .where(sql`${t.pipelineId} IS NOT NULL`),
  ],
)
