import { boolean, index, integer, jsonb, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core'
import { accounts } from '../accounts/accounts.table.js'

export const lists = pgTable(
  'lists',
  {
    id: serial('id').primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    fromName: text('from_name').notNull().default(''),
    fromEmail: text('from_email').notNull().default(''),
    replyTo: text('reply_to').notNull().default(''),
    subSuccessPage: text('sub_success_page').notNull().default(''),
    subConfirmedPage: text('sub_confirmed_page').notNull().default(''),
    unsubPage: text('unsub_page').notNull().default(''),
    doubleOptin: boolean('double_optin').notNull().default(false),
    confSubject: text('conf_subject').notNull().default(''),
    confMessage: text('conf_message').notNull().default(''),
    /** Declared custom fields of the list: {key: {name, type}}. */
    customFields: jsonb('custom_fields').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('lists_account_idx').on(t.accountId, t.id)],
)
