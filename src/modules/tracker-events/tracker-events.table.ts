import { bigserial, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { accounts } from '../accounts/accounts.table.js'
import { contacts } from '../subscribers/subscribers.table.js'

/**
 * Events a site reports about a subscriber (`POST /tracker/events`): category/action/label/property and a
 * value. Kept per contact, so erasing a contact (GDPR) takes its events along; segment `event` conditions
 * look them up by (contact, category, action).
 */
export const trackerEvents = pgTable(
  'tracker_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    contactId: integer('contact_id')
      .notNull()
      .references(() => contacts.id, { onDelete: 'cascade' }),
    category: text('category').notNull().default(''),
    action: text('action').notNull().default(''),
    label: text('label').notNull().default(''),
    property: text('property').notNull().default(''),
    /** The value as JSON text, exactly as it is answered (`value` JSON-encoded). */
    value: text('value').notNull().default('null'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('tracker_events_contact_idx').on(t.contactId, t.category, t.action)],
)
