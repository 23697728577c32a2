import { sql } from 'drizzle-orm'
import { bigint, bigserial, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { accounts } from '../accounts/accounts.table.js'
import { pipelines } from '../pipelines/pipelines.table.js'

/** active: at `node_id`, due at `due_at`; ended: reached an end (or the graph's end); stopped: cut short. */
export type RunStatus = 'active' | 'ended' | 'stopped'

/**
 * One run of a pipeline for one subscriber (its id is the log's `trigger_id`). A run is always at one node
 * with a due time: a wait is a run whose node is due later. Any worker claims due runs with SKIP LOCKED and
 * a lease (`claimed_until`), executes the node and moves the run on in the same transaction that writes the
 * node's log entry, so a crash repeats nothing and loses nothing.
 */
export const automationRuns = pgTable(
  'automation_runs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    pipelineId: integer('pipeline_id').notNull(),
    /** The pipeline version the run is on; an edit moves runs to the new graph (a removed node ends them). */
    pipelineVersion: integer('pipeline_version').notNull(),
    contactId: integer('contact_id'),
    email: text('email').notNull(),
    /** What started it: subscribe, api, event, purchase, tag, date, trigger (another pipeline). */
    triggerKind: text('trigger_kind').notNull(),
    status: text('status').$type<RunStatus>().notNull().default('active'),
    nodeId: text('node_id'),
    dueAt: timestamp('due_at', { withTimezone: true }),
    claimedUntil: timestamp('claimed_until', { withTimezone: true }),
    /** Per-run memory: split choices, when a goal/wait began, mail message ids per node. */
    state: jsonb('state').$type<Record<string, unknown>>().notNull().default({}),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    endedAt: timestamp('ended_at', { withTimezone: true }),
    /** Why a run ended or stopped (end node, unsubscribed, node removed, pipeline deleted...). */
    endReason: text('end_reason'),
    /**
     * A branch: a node whose port listed several ids forked the run; every branch of one trigger names the
     * trigger's first run here (null on that run itself). The log's `trigger_id` and the statistics count
     * triggers, not branches.
     */
    rootRunId: bigint('root_run_id', { mode: 'number' }),
  },
  (t) => [
    // The claim: due active runs, oldest due first.
    index('automation_runs_due_idx')
      .on(t.dueAt, t.id)
      .where(sql`${t.status} = 'active'`),
    index('automation_runs_pipeline_idx').on(t.pipelineId, t.contactId),
    index('automation_runs_contact_idx').on(t.accountId, t.email),
    index('automation_runs_root_idx')
      .on(t.rootRunId)
      .where(sql`${t.rootRunId} IS NOT NULL`),
  ],
)

/** One entry per executed node (api.md "Automation log entry"); `trigger_id` is the run id. */
export const automationLog = pgTable(
  'automation_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    accountId: integer('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    pipelineId: integer('pipeline_id').notNull(),
    runId: bigint('run_id', { mode: 'number' }).notNull(),
    actionId: text('action_id').notNull(),
    email: text('email').notNull(),
    /** What the node did: its type and name, the outcome (port taken, message id, tag, error...). */
    props: jsonb('props').$type<Record<string, unknown>>().notNull().default({}),
    /** The node ids the run went on to, or null at the end of a branch. */
    next: jsonb('next').$type<string[] | null>(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
  },
  (t) => [
    index('automation_log_contact_idx').on(t.accountId, t.email, t.id),
    index('automation_log_pipeline_idx').on(t.pipelineId, t.createdAt),
    index('automation_log_run_idx').on(t.runId, t.id),
  ],
)

/**
 * The last day (UTC, `YYYY-MM-DD`) each date pipeline was scanned on, so that a worker back after whole days
 * down scans the days it missed (triggers.ts, daysToScan). No row: never scanned.
 */
export const automationDateScans = pgTable('automation_date_scans', {
  pipelineId: integer('pipeline_id')
    .primaryKey()
    .references(() => pipelines.id, { onDelete: 'cascade' }),
  scannedOn: text('scanned_on').notNull(),
})
