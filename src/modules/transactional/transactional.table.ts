import { boolean, index, integer, jsonb, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core'

export interface BatchAttachment {
  name: string
  type: string
  /** base64, as received */
  content: string
}

/**
 * One transactional API call (results.id): the content every recipient shares. Each recipient has a row in
 * `messages` with its own merge variables; the sending worker renders and sends them.
 */
export const messageBatches = pgTable(
  'message_batches',
  {
    id: serial('id').primaryKey(),
    accountId: integer('account_id').notNull(),
    templateId: integer('template_id'),
    fromName: text('from_name').notNull(),
    fromEmail: text('from_email').notNull(),
    replyTo: text('reply_to'),
    subject: text('subject').notNull(),
    html: text('html'),
    text: text('text'),
    globalVars: jsonb('global_vars').$type<Record<string, string>>().notNull().default({}),
    /** cc and bcc addresses per `to` address (api.md: cc/bcc travel on repeated `to` entries). */
    copies: jsonb('copies').$type<Record<string, { cc: string[]; bcc: string[] }>>().notNull().default({}),
    attachments: jsonb('attachments').$type<BatchAttachment[]>().notNull().default([]),
    trackOpens: boolean('track_opens').notNull().default(true),
    trackClicks: boolean('track_clicks').notNull().default(true),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('message_batches_account_idx').on(t.accountId, t.id)],
)
