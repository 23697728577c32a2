import { index, integer, jsonb, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core'
import { accounts } from '../accounts/accounts.table.js'
import type { PipelineNode, PipelineStatus, PipelineTrigger, Reentry } from './pipeline-graph.js'

/**
 * An automation (contract §6): its trigger and its graph of nodes, stored as validated. `version` grows on
 * every edit, so the engine can tell a run that started on an older graph; a deleted pipeline keeps its row
 * (`deleted_at`) so its logs and statistics still name it, and its runs end.
 */
export const pipelines = pgTable(
  'pipelines',
  {
    id: serial('id').primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    listId: integer('list_id').notNull(),
    status: text('status').$type<PipelineStatus>().notNull().default('active'),
    trigger: jsonb('trigger').$type<PipelineTrigger>().notNull(),
    reentry: text('reentry').$type<Reentry>().notNull().default('once'),
    /** Id of the first node. */
    start: text('start').notNull(),
    actions: jsonb('actions').$type<PipelineNode[]>().notNull(),
    version: integer('version').notNull().default(1),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
  },
  (t) => [index('pipelines_account_idx').on(t.accountId, t.id)],
)
