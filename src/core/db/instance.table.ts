import { pgTable, text, timestamp } from 'drizzle-orm/pg-core'

/** Per-installation values every process must share, such as the secret that signs links in mail. */
export const instanceSettings = pgTable('instance_settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
})
