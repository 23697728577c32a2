import { index, integer, pgTable, text } from 'drizzle-orm/pg-core'
import { accounts } from '../accounts/accounts.table.js'
import type { SignalKind } from './signals.table.js'

/**
 * Which kinds of signal an account's automations listen for: a row for each active pipeline whose trigger is a
 * signal, written by the pipelines module in the transaction that creates, changes or deletes the pipeline.
 * A signal nobody listens for is not written: without it, every tag, subscribe, purchase and tracker event of
 * an account without automations was a row written, read by the engine and deleted again (a fifth of
 * PostgreSQL's work in a subscribe-bulk import with tags). A row per pipeline rather than per account and
 * kind, so two pipelines changed at once never overwrite each other's answer.
 */
export const signalListeners = pgTable(
  'signal_listeners',
  {
    /** A pipeline of the pipelines module (no foreign key: that module sits above this one). */
    pipelineId: integer('pipeline_id').primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    kind: text('kind').$type<SignalKind>().notNull(),
  },
  (t) => [index('signal_listeners_account_kind_idx').on(t.accountId, t.kind)],
)
