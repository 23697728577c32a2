import { bigint, integer, pgTable, primaryKey, smallint, text } from 'drizzle-orm/pg-core'

/**
 * Statistics counters per campaign (pipeline 0) or per automation mail node, kept in step with `events` in
 * the same transactions, so statistics read a few rows instead of counting millions of events. Each scope
 * is split over shards (chosen by message id) so that concurrent opens and clicks of one campaign do not
 * queue on a single row lock; readers sum the shards.
 */
export const statCounters = pgTable(
  'stat_counters',
  {
    campaignId: integer('campaign_id').notNull(),
    pipelineId: integer('pipeline_id').notNull().default(0),
    actionId: text('action_id').notNull().default(''),
    shard: smallint('shard').notNull(),
    /** Messages the relay accepted. */
    inject: bigint('inject', { mode: 'number' }).notNull().default(0),
    /** Messages that bounced at all (hard or soft), each once. */
    bounce: bigint('bounce', { mode: 'number' }).notNull().default(0),
    hardBounce: bigint('hard_bounce', { mode: 'number' }).notNull().default(0),
    softBounce: bigint('soft_bounce', { mode: 'number' }).notNull().default(0),
    open: bigint('open', { mode: 'number' }).notNull().default(0),
    totalOpen: bigint('total_open', { mode: 'number' }).notNull().default(0),
    click: bigint('click', { mode: 'number' }).notNull().default(0),
    totalClick: bigint('total_click', { mode: 'number' }).notNull().default(0),
    spam: bigint('spam', { mode: 'number' }).notNull().default(0),
    unsub: bigint('unsub', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.pipelineId, t.actionId, t.shard] })],
)
