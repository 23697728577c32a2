import { boolean, index, integer, jsonb, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core'

import type { BodyAttachment } from './body-render.js'

export type BatchAttachment = BodyAttachment

/** The cc and bcc of one `to` address (api.md: cc/bcc travel on repeated `to` entries). */
export interface BatchCopies {
  cc: string[]
  bcc: string[]
  /** The display names of cc addresses given with one (`"Jana" <jana@example.cz>`), by address. */
  names?: Record<string, string>
}

/**
 * The kinds of mail that take their content from a body row (campaigns keep theirs on the campaign). A
 * campaign's test copies (`test`) carry the campaign's content as it stood, and are rendered as its mail is
 * (test-copies.ts).
 */
export type BodyKind = 'transactional' | 'confirmation' | 'automation' | 'test'

/**
 * The body row of non-campaign mail: the content every recipient shares (for transactional mail, one API call:
 * results.id). Each recipient has a row in `messages` (batch_id) with its own merge variables; the one sender
 * renders and sends them.
 */
export const messageBatches = pgTable(
  'message_batches',
  {
    id: serial('id').primaryKey(),
    accountId: integer('account_id').notNull(),
    kind: text('kind').$type<BodyKind>().notNull().default('transactional'),
    templateId: integer('template_id'),
    fromName: text('from_name').notNull(),
    fromEmail: text('from_email').notNull(),
    replyTo: text('reply_to'),
    subject: text('subject').notNull(),
    html: text('html'),
    text: text('text'),
    /** The AMP for Email version (`text/x-amp-html`), its merge tags filled in per recipient when sent, untracked. */
    ampHtml: text('amp_html'),
    globalVars: jsonb('global_vars').$type<Record<string, string>>().notNull().default({}),
    /** cc and bcc addresses per `to` address. */
    copies: jsonb('copies').$type<Record<string, BatchCopies>>().notNull().default({}),
    attachments: jsonb('attachments').$type<BatchAttachment[]>().notNull().default([]),
    trackOpens: boolean('track_opens').notNull().default(true),
    trackClicks: boolean('track_clicks').notNull().default(true),
    /** List-Unsubscribe headers and *|UNSUB|* (automation mail); transactional and confirmation mail have none. */
    marketing: boolean('marketing').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('message_batches_account_idx').on(t.accountId, t.id)],
)
