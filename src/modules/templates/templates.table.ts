import { index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core'
import { accounts } from '../accounts/accounts.table.js'

export const templates = pgTable(
  'templates',
  {
    id: serial('id').primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    html: text('html').notNull(),
    /** Optional subject for transactional send-template; merge tags allowed. */
    subject: text('subject').notNull().default(''),
    folder: integer('folder').notNull().default(0),
    campaignId: integer('campaign_id').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('templates_account_idx').on(t.accountId, t.id)],
)
