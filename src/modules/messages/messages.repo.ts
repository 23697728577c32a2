import { eq, sql, type SQL } from 'drizzle-orm'
import type { DbHandle, Executor } from '../../core/db/client.js'
import { queryOne, queryPrepared } from '../../core/db/sql.js'
import { messages } from './messages.table.js'

export type MessageRow = typeof messages.$inferSelect
export type NewMessage = typeof messages.$inferInsert

export async function insertMessages(ex: Executor, rows: NewMessage[]): Promise<void> {
  if (rows.length) await ex.insert(messages).values(rows)
}

/**
 * What tracking, unsubscribes and bounces need of a message: who, which mail, which links. Never the stored
 * HTML body, which only the web version reads (findMessage).
 */
export type TrackedMessage = Pick<
  MessageRow,
  'id' | 'accountId' | 'kind' | 'campaignId' | 'pipelineId' | 'actionId' | 'contactId' | 'email' | 'links'
>

/** A message's tracked columns as SQL returns them (snake_case, bigint id possibly as text). */
interface TrackedRow {
  id: string | number
  account_id: number
  kind: MessageRow['kind']
  campaign_id: number
  pipeline_id: number | null
  action_id: string | null
  contact_id: number | null
  email: string
  links: string[] | null
}

const toTracked = (row: TrackedRow): TrackedMessage => ({
  id: Number(row.id),
  accountId: row.account_id,
  kind: row.kind,
  campaignId: row.campaign_id,
  pipelineId: row.pipeline_id,
  actionId: row.action_id,
  contactId: row.contact_id,
  email: row.email,
  links: row.links,
})

/**
 * The messages of tracking tokens, in the order of `ids` (undefined where there is none). Every open, click
 * and unsubscribe starts here, so it is a prepared statement (planned once per connection) that takes a
 * whole batch of hits at once.
 */
export async function findTrackedMessages(
  handle: DbHandle,
  ids: readonly number[],
): Promise<(TrackedMessage | undefined)[]> {
  const rows = await queryPrepared<TrackedRow>(
    handle,
    sql`SELECT id, account_id, kind, campaign_id, pipeline_id, action_id, contact_id, email, links
        FROM messages WHERE id = ANY(${`{${ids.join(',')}}`}::bigint[])`,
  )
  const byId = new Map(rows.map((row) => [Number(row.id), toTracked(row)]))
  return ids.map((id) => byId.get(id))
}

export async function findTrackedMessage(handle: DbHandle, id: number): Promise<TrackedMessage | undefined> {
  return (await findTrackedMessages(handle, [id]))[0]
}

export async function findMessage(ex: Executor, id: number): Promise<MessageRow | undefined> {
  const [row] = await ex.select().from(messages).where(eq(messages.id, id))
  return row
}

export async function queuedOfBatch(ex: Executor, batchId: number): Promise<MessageRow[]> {
  return ex
    .select()
    .from(messages)
    .where(sql`${messages.batchId} = ${batchId} AND ${messages.status} = 0`)
    .orderBy(messages.id)
}

export async function markAccepted(
  ex: Executor,
  id: number,
  smtpMessageId: string,
  now: Date,
): Promise<void> {
  await ex
    .update(messages)
    .set({ status: 1, smtpMessageId, sentAt: now, error: null })
    .where(eq(messages.id, id))
}

/** Side effect: the row refused (2) with the error; `subject`, the one rendered for it, kept as markSent keeps it. */
export async function markRefused(
  ex: Executor,
  id: number,
  error: string,
  now: Date,
  subject?: string,
): Promise<void> {
  await ex
    .update(messages)
    .set({
      status: 2,
      error: error.slice(0, 1000),
      sentAt: now,
      // Cut as markSent cuts it (characters, not UTF-16 units: an emoji is never split).
      ...(subject === undefined ? {} : { subject: sql`left(${subject}, 998)` }),
    })
    .where(eq(messages.id, id))
}

export type Milestone =
  'first_open_at' | 'first_click_at' | 'bounced_at' | 'soft_bounced_at' | 'complained_at' | 'unsubscribed_at'

export interface MilestoneHit {
  message: Pick<
    MessageRow,
    'id' | 'accountId' | 'campaignId' | 'pipelineId' | 'actionId' | 'contactId' | 'email' | 'links'
  >
  /** True the first time this milestone is reached for the message: unique counts rest on it. */
  first: boolean
  /** Whether the message had bounced (hard or soft) before this call: `bounce` counts a message once. */
  bouncedBefore: boolean
  /** The row's send status (2: the relay refused it, so it was never injected). */
  status: number
}

/**
 * `before` and `stamp` CTEs that stamp the milestone column the first time it is reached: `stamp` returns the
 * message's tracked columns, `first`, `bounced_before` and `status`. (Opens and clicks stamp theirs in
 * batches, in events.repo recordHits.)
 */
function milestoneCtes(id: number, milestone: Milestone, now: Date): SQL {
  const col = sql.raw(milestone)
  return sql`before AS (
      SELECT ${col} AS was, (bounced_at IS NOT NULL OR soft_bounced_at IS NOT NULL) AS bounced
      FROM messages WHERE id = ${id} FOR UPDATE),
    stamp AS (
      UPDATE messages SET ${col} = COALESCE(messages.${col}, ${now.toISOString()}::timestamptz)
      FROM before WHERE messages.id = ${id}
      RETURNING messages.id, account_id, kind, campaign_id, pipeline_id, action_id, contact_id, email, links,
                (before.was IS NULL) AS first, before.bounced AS bounced_before, messages.status)`
}

/**
 * Side effect: stamps the milestone column the first time it is reached, in one statement, so concurrent
 * hits of one message count one unique open/click/bounce.
 */
export async function reachMilestone(
  ex: Executor,
  id: number,
  milestone: Milestone,
  now: Date,
): Promise<MilestoneHit | undefined> {
  const row = await queryOne<TrackedRow & { first: boolean; bounced_before: boolean; status: number }>(
    ex,
    sql`WITH ${milestoneCtes(id, milestone, now)} SELECT * FROM stamp`,
  )
  if (!row) return undefined
  return {
    message: toTracked(row),
    first: row.first,
    bouncedBefore: row.bounced_before,
    status: Number(row.status),
  }
}
