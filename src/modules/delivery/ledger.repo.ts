import { sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import type { ContactForMerge } from '../messages/index.js'
import type { CampaignError } from './campaign-errors.js'
import type { SenderIdentity } from './campaign-sender-identity.js'
import type { CampaignRow } from './campaigns.schemas.js'
import type { CampaignStatus } from './campaigns.table.js'

const iso = (d: Date) => d.toISOString()
/** `id IN (...)` for a list of message ids, as one JSON parameter (one statement shape whatever the count). */
const idIn = (ids: number[]) =>
  sql`id IN (SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::bigint)`

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
  set: SQL = sql``,
): Promise<{ id: number; status: CampaignStatus } | undefined> {
  return queryOne(
    ex,
    sql`UPDATE campaigns SET status = ${to}, changed_at = ${iso(now)}::timestamptz ${set}
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

export interface ClaimedRecipient extends ContactForMerge {
  id: number
  contact_id: number | null
  recipient_name: string
  /** Set when an earlier try was deferred by the relay. */
  error: string | null
}

const claimedColumns = sql`claimed.id, claimed.email, claimed.contact_id, claimed.recipient_name, claimed.error,
  coalesce(ct.name, '') AS name, coalesce(ct.surname, '') AS surname, coalesce(ct.gender, '') AS gender,
  ct.company, coalesce(ct.city, '') AS city, coalesce(ct.street, '') AS street, coalesce(ct.zip, '') AS zip,
  coalesce(ct.country, '') AS country, ct.phone, coalesce(ct.pretitle, '') AS pretitle,
  coalesce(ct.surtitle, '') AS surtitle, ct.birthday, ct.nameday, ct.custom_fields`

/** Claims the rows `picked` selects (locking them), setting `set`, with what their merge tags need. */
async function claimPicked(ex: Executor, picked: SQL, set: SQL): Promise<ClaimedRecipient[]> {
  const rows = await queryRows<ClaimedRecipient & { id: string | number }>(
    ex,
    sql`WITH picked AS (${picked}),
        claimed AS (
          UPDATE messages SET ${set}
          FROM picked WHERE messages.id = picked.id
          RETURNING messages.id, messages.email, messages.recipient_name, messages.error,
                    messages.contact_id)
        SELECT ${claimedColumns} FROM claimed LEFT JOIN contacts ct ON ct.id = claimed.contact_id
        ORDER BY claimed.id`,
  )
  return rows.map((r) => ({ ...r, id: Number(r.id) }))
}

/** Only rows of a campaign that is sending and not paused are claimed. */
const sendable = (campaignId: number) =>
  sql`EXISTS (SELECT 1 FROM campaigns c WHERE c.id = ${campaignId} AND c.status = 2 AND c.paused_at IS NULL)`

/**
 * Side effect: claims up to `limit` queued ledger rows of a sending, unpaused campaign for this sender until
 * `until` (status 4), skipping rows another sender holds. `afterId` keeps a sender walking forward through
 * the ledger instead of re-reading rows already claimed.
 */
export function claimQueued(
  ex: Executor,
  campaignId: number,
  afterId: number,
  limit: number,
  until: Date,
): Promise<ClaimedRecipient[]> {
  return claimPicked(
    ex,
    sql`SELECT m.id FROM messages m
        WHERE m.campaign_id = ${campaignId} AND m.status = 0 AND m.id > ${afterId} AND ${sendable(campaignId)}
        ORDER BY m.id LIMIT ${limit}
        FOR UPDATE OF m SKIP LOCKED`,
    sql`status = 4, claimed_until = ${iso(until)}::timestamptz`,
  )
}

/**
 * Side effect: claims rows whose claim ran out (their sender died, or the relay deferred them and their
 * retry time came), as claimQueued does.
 */
export function claimExpired(
  ex: Executor,
  campaignId: number,
  now: Date,
  limit: number,
  until: Date,
): Promise<ClaimedRecipient[]> {
  return claimPicked(
    ex,
    sql`SELECT m.id FROM messages m
        WHERE m.campaign_id = ${campaignId} AND m.status = 4 AND m.claimed_until < ${iso(now)}::timestamptz
          AND ${sendable(campaignId)}
        ORDER BY m.id LIMIT ${limit}
        FOR UPDATE OF m SKIP LOCKED`,
    sql`claimed_until = ${iso(until)}::timestamptz`,
  )
}

/** Side effect: extends this sender's claim on rows it still holds. */
export async function renewClaim(ex: Executor, ids: number[], until: Date): Promise<void> {
  if (ids.length === 0) return
  await ex.execute(
    sql`UPDATE messages SET claimed_until = ${iso(until)}::timestamptz
        WHERE status = 4 AND ${idIn(ids)}`,
  )
}

export interface AcceptedRow {
  id: number
  smtpMessageId: string
}

/**
 * Side effect, one statement: marks rows the relay accepted as sent (1), writes their `send` events and
 * adds them to the campaign's `inject` counters. Returns the events written, for the webhook outbox.
 */
export async function markSent(
  ex: Executor,
  campaignId: number,
  accepted: AcceptedRow[],
  now: Date,
): Promise<{ account_id: number; message_id: number; contact_id: number | null; email: string }[]> {
  if (accepted.length === 0) return []
  const rows = await queryRows<{
    account_id: number
    message_id: string | number
    contact_id: number | null
    email: string
  }>(
    ex,
    sql`WITH v AS (
          SELECT * FROM jsonb_to_recordset(${JSON.stringify(accepted)}::jsonb) AS v(id bigint, "smtpMessageId" text)),
        sent AS (
          UPDATE messages SET status = 1, sent_at = ${iso(now)}::timestamptz, claimed_until = NULL,
                 smtp_message_id = v."smtpMessageId", error = NULL
          FROM v WHERE messages.id = v.id AND messages.status = 4
          RETURNING messages.id, messages.account_id, messages.contact_id, messages.email),
        logged AS (
          INSERT INTO events (account_id, message_id, campaign_id, contact_id, email, event, occurred_at)
          SELECT account_id, id, ${campaignId}, contact_id, email, 'send', ${iso(now)}::timestamptz FROM sent
          RETURNING account_id, message_id, contact_id, email),
        counted AS (
          INSERT INTO stat_counters (campaign_id, pipeline_id, action_id, shard, inject)
          -- In shard order, so two senders adding to one campaign cannot deadlock on its shard rows.
          SELECT ${campaignId}, 0, '', (id % 16)::smallint, count(*) FROM sent GROUP BY 4 ORDER BY 4
          ON CONFLICT (campaign_id, pipeline_id, action_id, shard)
          DO UPDATE SET inject = stat_counters.inject + excluded.inject)
        SELECT * FROM logged`,
  )
  return rows.map((r) => ({ ...r, message_id: Number(r.message_id) }))
}

/** Side effect: the relay deferred these (4xx or no connection): they wait, claimed, until `retryAt`. */
export async function deferClaimed(ex: Executor, ids: number[], error: string, retryAt: Date) {
  if (ids.length === 0) return
  await ex.execute(
    sql`UPDATE messages SET claimed_until = ${iso(retryAt)}::timestamptz, error = ${error.slice(0, 1000)}
        WHERE status = 4 AND ${idIn(ids)}`,
  )
}

/** Side effect: gives claimed rows back to the queue (the campaign stopped while they were in hand). */
export async function releaseClaimed(ex: Executor, ids: number[]): Promise<void> {
  if (ids.length === 0) return
  await ex.execute(
    sql`UPDATE messages SET status = 0, claimed_until = NULL
        WHERE status = 4 AND ${idIn(ids)}`,
  )
}

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

/** Whether rows are still queued (status 0) anywhere in the ledger, also behind a sender's cursor. */
export async function hasQueued(ex: Executor, campaignId: number): Promise<boolean> {
  const row = await queryOne(
    ex,
    sql`SELECT 1 FROM messages WHERE campaign_id = ${campaignId} AND status = 0 LIMIT 1`,
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
