import { index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { lists } from '../lists/lists.table.js'

/** A saved condition (contract §6 language) over the subscribers of one list; ids are strings on the wire. */
export const segments = pgTable(
  'segments',
  {
    id: text('id').primaryKey(),
    accountId: integer('account_id').notNull(),
    listId: integer('list_id')
      .notNull()
      .references(() => lists.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    filter: jsonb('filter').$type<unknown>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('segments_list_idx').on(t.accountId, t.listId)],
)
