import { index, integer, jsonb, pgTable, serial, smallint, text, timestamp } from 'drizzle-orm/pg-core'
import { accounts } from '../accounts/accounts.table.js'

/** What a campaign is sent to: whole lists, segments of lists, or both (each address once). */
export interface CampaignTargets {
  lists: number[]
  segments: { id: string; list: number }[]
}

/** Status codes of api.md: 0 draft, 7 scheduled, 1 preparing, 2 sending, 3 sent, 4 errored. */
export type CampaignStatus = 0 | 1 | 2 | 3 | 4 | 7

export const campaigns = pgTable(
  'campaigns',
  {
    id: serial('id').primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    subject: text('subject').notNull(),
    fromName: text('from_name').notNull(),
    fromEmail: text('from_email').notNull(),
    replyTo: text('reply_to').notNull(),
    htmlText: text('html_text').notNull(),
    plainText: text('plain_text'),
    templateId: integer('template_id'),
    targets: jsonb('targets').$type<CampaignTargets>().notNull(),
    status: smallint('status').$type<CampaignStatus>().notNull().default(0),
    /** Set while a sending campaign is paused; workers claim nothing of it meanwhile. */
    pausedAt: timestamp('paused_at', { withTimezone: true }),
    scheduledAt: timestamp('scheduled_at', { withTimezone: true }),
    /** When sending started (status 1). */
    sentAt: timestamp('sent_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    /** Recipients frozen into the send ledger at "preparing". */
    recipients: integer('recipients').notNull().default(0),
    /** Why the campaign is errored (status 4), as its owner reads it in `error.message`. */
    error: text('error'),
    /** The `error.code` of contract §4 (campaign-errors.ts); null on rows errored before codes were stored. */
    errorCode: text('error_code'),
    /** Click targets by index, frozen at "preparing" from the HTML; tracked URLs point at an index. */
    links: jsonb('links').$type<string[]>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    changedAt: timestamp('changed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('campaigns_account_idx').on(t.accountId, t.id),
    // The scheduler's scan: scheduled campaigns by due time.
    index('campaigns_scheduled_idx').on(t.status, t.scheduledAt),
  ],
)
