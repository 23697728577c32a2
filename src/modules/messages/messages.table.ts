import { sql } from 'drizzle-orm'
import {
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  smallint,
  text,
  timestamp,
} from 'drizzle-orm/pg-core'

export type MessageKind = 'transactional' | 'campaign' | 'automation' | 'test' | 'confirmation'

/**
 * One mail to one recipient. Campaigns freeze their recipients into these rows at "preparing" (the send
 * ledger: workers claim status-0 rows with SKIP LOCKED); transactional sends write one per recipient.
 * Tracking tokens, VERP return paths and events all point at a row here. The first_* columns make unique
 * opens/clicks exact with one conditional UPDATE.
 */
export const messages = pgTable(
  'messages',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    accountId: integer('account_id').notNull(),
    kind: text('kind').$type<MessageKind>().notNull(),
    /** Transactional results.id: all recipients of one API call. */
    batchId: integer('batch_id'),
    campaignId: integer('campaign_id').notNull().default(0),
    pipelineId: integer('pipeline_id'),
    actionId: text('action_id'),
    contactId: integer('contact_id'),
    email: text('email').notNull(),
    recipientName: text('recipient_name').notNull().default(''),
    /** Per-recipient merge variables (transactional merge_vars), rendered by the sending worker. */
    vars: jsonb('vars').$type<Record<string, string>>(),
    subject: text('subject').notNull().default(''),
    /**
     * 0 queued, 1 accepted by the relay, 2 refused by the relay, 3 skipped (suppressed or invalid),
     * 4 claimed by a sender until `claimed_until`, 5 cancelled before it was sent.
     */
    status: smallint('status').notNull().default(0),
    /** The lease of a claimed row (status 4): past it, a crashed sender's rows are claimed again. */
    claimedUntil: timestamp('claimed_until', { withTimezone: true }),
    /**
     * The sender process holding a claimed row (status 4), by the number of the session lock it holds while it
     * lives (delivery/claimer.ts): a row whose sender's lock is gone is claimed again at once, without waiting for
     * the lease. Null where only the lease tells (a deferred row waiting for its retry, a pooled connection).
     */
    claimedBy: integer('claimed_by'),
    smtpMessageId: text('smtp_message_id'),
    trackOpens: boolean('track_opens').notNull().default(true),
    trackClicks: boolean('track_clicks').notNull().default(true),
    /** Original URLs by index, for click redirects (transactional; campaigns keep theirs per campaign). */
    links: jsonb('links').$type<string[]>(),
    /** Rendered HTML kept for the web version when it cannot be rendered again (transactional). */
    html: text('html'),
    error: text('error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    sentAt: timestamp('sent_at', { withTimezone: true }),
    firstOpenAt: timestamp('first_open_at', { withTimezone: true }),
    firstClickAt: timestamp('first_click_at', { withTimezone: true }),
    bouncedAt: timestamp('bounced_at', { withTimezone: true }),
    softBouncedAt: timestamp('soft_bounced_at', { withTimezone: true }),
    complainedAt: timestamp('complained_at', { withTimezone: true }),
    unsubscribedAt: timestamp('unsubscribed_at', { withTimezone: true }),
  },
  (t) => [
    index('messages_campaign_status_idx').on(t.campaignId, t.status, t.id),
    index('messages_account_email_idx').on(t.accountId, t.email),
    // This index and the next are partial, as the pipeline index is: campaign mail, the bulk of the table,
    // carries no batch and is not counted by kind, so its rows skip them at insert, claim and mark (each of
    // which writes every index: the updates change `status`, so they are never HOT). Issue 11: PostgreSQL's
    // share of a campaign message.
    index('messages_batch_idx')
      .on(t.batchId)
      .where(sql`${t.batchId} IS NOT NULL`),
    // GET /transactional/stats(/doi): an account's mail of one of these kinds sent within a date range.
    index('messages_account_kind_sent_idx')
      .on(t.accountId, t.kind, t.sentAt)
      .where(sql`${t.kind} IN ('transactional', 'confirmation')`),
    // Automation statistics: a pipeline's recipients in ledger order (stats-detail) and its clicked mail
    // (conversions). Partial: campaign and transactional mail carry no pipeline.
    index('messages_pipeline_idx')
      .on(t.pipelineId, t.id)
      .where(sql`${t.pipelineId} IS NOT NULL`),
  ],
)
