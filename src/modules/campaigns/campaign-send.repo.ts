import { sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import type { CampaignError } from './campaign-errors.js'
import type { SenderIdentity } from './campaign-sender-identity.js'
import type { CampaignRow } from './campaigns.schemas.js'
import type { CampaignStatus } from './campaigns.table.js'

const iso = (d: Date) => d.toISOString()

/** What a move sets besides the status and `changed_at`; a column not named is left as it is. */
export interface CampaignMoveSets {
  sentAt?: Date
  /** A date, or null to clear it. */
  scheduledAt?: Date | null
  /** The error to record (message and code), or null to clear both. */
  error?: CampaignError | null
  /** Clears `paused_at`. */
  unpause?: boolean
}

function moveSets(set: CampaignMoveSets): SQL {
  const parts: SQL[] = []
  if (set.sentAt) parts.push(sql`sent_at = ${iso(set.sentAt)}::timestamptz`)
  if (set.scheduledAt !== undefined)
    parts.push(sql`scheduled_at = ${set.scheduledAt ? iso(set.scheduledAt) : null}::timestamptz`)
  if (set.error !== undefined)
    parts.push(sql`error = ${set.error?.message ?? null}, error_code = ${set.error?.code ?? null}`)
  if (set.unpause) parts.push(sql`paused_at = NULL`)
  return parts.length ? sql`, ${sql.join(parts, sql`, `)}` : sql``
}

/**
 * Side effect: moves a campaign from `from` statuses to `to`, setting the given columns; the row when it moved,
 * undefined when its status was not one of `from` (someone else moved it first).
 */
export async function moveCampaign(
  ex: Executor,
  accountId: number,
  id: number,
  from: readonly CampaignStatus[],
  to: CampaignStatus,
  now: Date,
  set: CampaignMoveSets = {},
): Promise<{ id: number; status: CampaignStatus } | undefined> {
  return queryOne(
    ex,
    sql`UPDATE campaigns SET status = ${to}, changed_at = ${iso(now)}::timestamptz ${moveSets(set)}
        WHERE id = ${id} AND account_id = ${accountId}
          AND status IN (SELECT jsonb_array_elements_text(${JSON.stringify(from)}::jsonb)::smallint)
        RETURNING id, status`,
  )
}

/** Side effect: sets or clears the pause of a sending campaign; false when it is not sending. */
export async function setPaused(
  ex: Executor,
  accountId: number,
  id: number,
  pausedAt: Date | null,
  now: Date,
): Promise<boolean> {
  const row = await queryOne(
    ex,
    sql`UPDATE campaigns SET paused_at = ${pausedAt ? iso(pausedAt) : null}::timestamptz,
               changed_at = ${iso(now)}::timestamptz
        WHERE id = ${id} AND account_id = ${accountId} AND status = 2 RETURNING id`,
  )
  return row !== undefined
}

/**
 * Side effect: freezes the recipients into the send ledger, one queued `messages` row per address: status-1
 * members of the target lists and of the segments (given as subqueries of contact ids), each contact once,
 * suppressed addresses left out. Returns how many were written.
 */
export async function freezeRecipients(
  ex: Executor,
  c: Pick<CampaignRow, 'id' | 'accountId' | 'subject'>,
  lists: number[],
  segmentContacts: SQL[],
  now: Date,
): Promise<number> {
  const sources = [
    sql`SELECT contact_id FROM memberships
        WHERE account_id = ${c.accountId} AND status = 1
          AND list_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(lists)}::jsonb)::int)`,
    ...segmentContacts,
  ]
  const row = await queryOne<{ n: number }>(
    ex,
    sql`WITH frozen AS (
          INSERT INTO messages (account_id, kind, campaign_id, contact_id, email, recipient_name, subject,
                                status, created_at)
          SELECT ${c.accountId}, 'campaign', ${c.id}, ct.id, ct.email, btrim(ct.name || ' ' || ct.surname),
                 ${c.subject}, 0, ${iso(now)}::timestamptz
          FROM contacts ct
          WHERE ct.account_id = ${c.accountId} AND ct.suppressed IS NULL
            AND ct.id IN (${sql.join(sources, sql` UNION `)})
          ORDER BY ct.id
          RETURNING 1)
        SELECT count(*)::int AS n FROM frozen`,
  )
  return row?.n ?? 0
}

/** The planner's estimate of the send ledger's rows, as its last ANALYZE left it (0 before any). */
export async function ledgerRowEstimate(ex: Executor): Promise<number> {
  const row = await queryOne<{ n: number }>(
    ex,
    sql`SELECT greatest(reltuples, 0)::float8 AS n FROM pg_class WHERE oid = 'messages'::regclass`,
  )
  return row?.n ?? 0
}

/**
 * Side effect: refreshes the planner's statistics of the send ledger (sampled: a few hundred ms at millions of
 * rows), which also makes every connection plan its prepared statements over the ledger again. Run in a
 * transaction of its own: waits at most 5 s for an autovacuum of the table, which gives way to it.
 */
export async function analyzeLedger(tx: Executor): Promise<void> {
  await tx.execute(sql`SET LOCAL lock_timeout = '5s'`)
  await tx.execute(sql`ANALYZE messages`)
}

/** Only rows of a campaign that is sending and not paused are claimed. */
export const sendable = (campaignId: number) =>
  sql`EXISTS (SELECT 1 FROM campaigns c WHERE c.id = ${campaignId} AND c.status = 2 AND c.paused_at IS NULL)`

/** Side effect: a cancelled campaign's unsent rows become 5 (cancelled). */
export async function cancelQueued(ex: Executor, campaignId: number): Promise<void> {
  await ex.execute(sql`UPDATE messages SET status = 5 WHERE campaign_id = ${campaignId} AND status = 0`)
}

/** Side effect: a sending campaign whose ledger holds nothing queued or claimed becomes sent (3). */
export async function finishIfDone(ex: Executor, campaignId: number, now: Date): Promise<boolean> {
  const row = await queryOne(
    ex,
    sql`UPDATE campaigns SET status = 3, finished_at = ${iso(now)}::timestamptz
        WHERE id = ${campaignId} AND status = 2
          AND NOT EXISTS (SELECT 1 FROM messages WHERE campaign_id = ${campaignId} AND status IN (0, 4))
        RETURNING id`,
  )
  return row !== undefined
}

/**
 * What is left of a campaign's send ledger: `none` when it stopped at "preparing", before freezing anyone;
 * `pending` while rows are queued or claimed (a claim runs out and is sent again); `done` otherwise.
 */
export async function ledgerState(ex: Executor, campaignId: number): Promise<'none' | 'pending' | 'done'> {
  const row = await queryOne<{ any: boolean; pending: boolean }>(
    ex,
    sql`SELECT EXISTS (SELECT 1 FROM messages WHERE campaign_id = ${campaignId}) AS any,
               EXISTS (SELECT 1 FROM messages WHERE campaign_id = ${campaignId} AND status IN (0, 4)) AS pending`,
  )
  return row?.pending ? 'pending' : row?.any ? 'done' : 'none'
}

export async function anyAccepted(ex: Executor, campaignId: number): Promise<boolean> {
  const row = await queryOne(
    ex,
    sql`SELECT 1 FROM messages WHERE campaign_id = ${campaignId} AND status = 1 LIMIT 1`,
  )
  return row !== undefined
}

/** Sending, unpaused campaigns, oldest first. */
export async function sendingCampaignIds(ex: Executor): Promise<number[]> {
  const rows = await queryRows<{ id: number }>(
    ex,
    sql`SELECT id FROM campaigns WHERE status = 2 AND paused_at IS NULL ORDER BY id LIMIT 20`,
  )
  return rows.map((r) => r.id)
}

/** Side effect: scheduled campaigns whose time came move to preparing (1); their ids. */
export async function startDueScheduled(ex: Executor, now: Date): Promise<number[]> {
  const rows = await queryRows<{ id: number }>(
    ex,
    sql`UPDATE campaigns SET status = 1, sent_at = ${iso(now)}::timestamptz, changed_at = ${iso(now)}::timestamptz
        WHERE status = 7 AND scheduled_at <= ${iso(now)}::timestamptz RETURNING id`,
  )
  return rows.map((r) => r.id)
}

/** Side effect: a preparing or sending campaign stops with status 4 and why. */
export async function errorCampaign(ex: Executor, campaignId: number, reason: CampaignError, now: Date) {
  await ex.execute(
    sql`UPDATE campaigns SET status = 4, error_code = ${reason.code}, error = ${reason.message.slice(0, 1000)},
               changed_at = ${iso(now)}::timestamptz
        WHERE id = ${campaignId} AND status IN (1, 2)`,
  )
}

/** Side effect: the sender fields the campaign goes out with, once it took the empty ones from its lists. */
export async function setSender(ex: Executor, campaignId: number, s: SenderIdentity) {
  await ex.execute(
    sql`UPDATE campaigns SET from_name = ${s.fromName}, from_email = ${s.fromEmail}, reply_to = ${s.replyTo}
        WHERE id = ${campaignId}`,
  )
}

/** Side effect: stores the links frozen at "preparing" and the recipient count; the campaign starts sending. */
export async function startSending(
  ex: Executor,
  campaignId: number,
  links: string[],
  recipients: number,
  now: Date,
): Promise<void> {
  await ex.execute(
    sql`UPDATE campaigns SET status = 2, links = ${JSON.stringify(links)}::jsonb, recipients = ${recipients},
               changed_at = ${iso(now)}::timestamptz
        WHERE id = ${campaignId} AND status = 1`,
  )
}

/** Campaigns waiting in "preparing" (a send or a due schedule put them there). */
export async function preparingCampaignIds(ex: Executor): Promise<number[]> {
  const rows = await queryRows<{ id: number }>(
    ex,
    sql`SELECT id FROM campaigns WHERE status = 1 ORDER BY id LIMIT 10`,
  )
  return rows.map((r) => r.id)
}

/** Side effect: locks a preparing campaign for this transaction; false when another worker holds it. */
export async function lockPreparing(ex: Executor, id: number): Promise<boolean> {
  const rows = await queryRows(
    ex,
    sql`SELECT id FROM campaigns WHERE id = ${id} AND status = 1 FOR UPDATE SKIP LOCKED`,
  )
  return rows.length > 0
}
