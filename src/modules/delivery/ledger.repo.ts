import { sql, type SQL } from 'drizzle-orm'
import type { DbHandle, Executor } from '../../core/db/client.js'
import { queryPrepared, queryRows, queryRowsOn } from '../../core/db/sql.js'
import { counterIncrementsSql, eventsInsertSql } from '../events/index.js'
import { contactMergeColumns, type ContactForMerge } from '../messages/index.js'
import { CLAIMER_LOCK_SPACE } from './claimer.js'

const iso = (d: Date) => d.toISOString()
/** `id IN (...)` for a list of message ids, as one JSON parameter (one statement shape whatever the count). */
const idIn = (ids: readonly number[], column: SQL = sql`id`) =>
  sql`${column} IN (SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::bigint)`

/**
 * Where a claim takes rows from: one campaign's ledger (with the campaign's own "may it send now" condition,
 * which the campaigns module writes), or the rows of every other kind of mail (each with a body row).
 */
export type ClaimScope = { campaignId: number; sendable: SQL } | { bodies: true }

/** A claimed row with its contact's columns (empty for body mail), as merge tags read them. */
export interface ClaimedRow extends ContactForMerge {
  id: number
  account_id: number
  kind: string
  contact_id: number | null
  recipient_name: string
  batch_id: number | null
  campaign_id: number
  pipeline_id: number | null
  action_id: string | null
  vars: Record<string, string> | null
  /** Set when an earlier try was deferred by the relay. */
  error: string | null
}

const claimedColumns = sql`claimed.id, claimed.account_id, claimed.kind, claimed.email, claimed.contact_id,
  claimed.recipient_name, claimed.error, claimed.batch_id, claimed.campaign_id, claimed.pipeline_id,
  claimed.action_id, claimed.vars, ${contactMergeColumns('ct', { outerJoined: true, without: ['email'] })}`

/**
 * Claims the rows `picked` selects (locking them), setting `set`, with what their merge tags need. Prepared
 * (planned once per connection): a sender claims several times a second, and parsing and planning this
 * statement and markSent's were about a sixth of PostgreSQL's time in a campaign send (profiled, issue 11).
 */
async function claimPicked(
  handle: DbHandle,
  picked: SQL,
  set: SQL,
  withContact: boolean,
): Promise<ClaimedRow[]> {
  // Mail with a body row takes its values from `vars`: no contact columns to read for it.
  const contactJoin = withContact
    ? sql`LEFT JOIN contacts ct ON ct.id = claimed.contact_id`
    : sql`LEFT JOIN contacts ct ON false`
  const rows = await queryPrepared<ClaimedRow & { id: string | number }>(
    handle,
    sql`WITH picked AS (${picked}),
        claimed AS (
          UPDATE messages SET ${set}
          FROM picked WHERE messages.id = picked.id
          RETURNING messages.id, messages.account_id, messages.kind, messages.email, messages.recipient_name,
                    messages.error, messages.contact_id, messages.batch_id, messages.campaign_id,
                    messages.pipeline_id, messages.action_id, messages.vars)
        SELECT ${claimedColumns} FROM claimed ${contactJoin}
        ORDER BY claimed.id`,
  )
  // In place rather than a copy of each 26-column row: a batch's rows live until it is marked, long enough for
  // V8 to move them out of the young generation, and the copies doubled what it moved (allocation profile).
  for (const r of rows) r.id = Number(r.id)
  return rows as ClaimedRow[]
}

const scopeWhere = (scope: ClaimScope) =>
  'bodies' in scope
    ? sql`m.campaign_id = 0 AND m.batch_id IS NOT NULL`
    : sql`m.campaign_id = ${scope.campaignId} AND ${scope.sendable}`

/**
 * Side effect: claims up to `limit` queued ledger rows of the scope for this sender until `until` (status 4),
 * skipping rows another sender holds. `afterId` keeps a sender walking forward through the ledger instead of
 * re-reading rows already claimed. `claimer`: the sender's lock number (claimer.ts), or null for the lease alone.
 */
export function claimQueued(
  handle: DbHandle,
  scope: ClaimScope,
  afterId: number,
  limit: number,
  until: Date,
  claimer: number | null = null,
): Promise<ClaimedRow[]> {
  return claimPicked(
    handle,
    sql`SELECT m.id FROM messages m
        WHERE m.status = 0 AND m.id > ${afterId} AND ${scopeWhere(scope)}
        ORDER BY m.id LIMIT ${limit}
        FOR UPDATE OF m SKIP LOCKED`,
    sql`status = 4, claimed_until = ${iso(until)}::timestamptz, claimed_by = ${claimer}::int`,
    !('bodies' in scope),
  )
}

/**
 * A claimed row's sender is gone: the session lock its number names is held by no session of this database
 * (claimer.ts). Read only for claimed rows of the scope, when a sender has nothing queued to claim.
 */
const claimerGone = sql`(m.claimed_by IS NOT NULL AND NOT EXISTS (
  SELECT 1 FROM pg_locks l
  WHERE l.locktype = 'advisory' AND l.classid = ${CLAIMER_LOCK_SPACE}::int::oid AND l.objsubid = 2
    AND l.objid = m.claimed_by::oid AND l.granted
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())))`

/**
 * Side effect: claims rows whose claim ran out (the relay deferred them and their retry time came, or their
 * sender died: its lock is gone, or the lease ran out), as claimQueued does. `held` are rows this process is
 * relaying still (a renewal held up behind a busy database let their lease run out): they are neither claimed
 * nor counted against the limit.
 */
export function claimExpired(
  handle: DbHandle,
  scope: ClaimScope,
  now: Date,
  limit: number,
  until: Date,
  held: readonly number[] = [],
  claimer: number | null = null,
): Promise<ClaimedRow[]> {
  const notHeld = held.length ? sql`AND NOT ${idIn(held, sql`m.id`)}` : sql``
  return claimPicked(
    handle,
    sql`SELECT m.id FROM messages m
        WHERE m.status = 4 AND (m.claimed_until < ${iso(now)}::timestamptz OR ${claimerGone})
          AND ${scopeWhere(scope)} ${notHeld}
        ORDER BY m.id LIMIT ${limit}
        FOR UPDATE OF m SKIP LOCKED`,
    sql`claimed_until = ${iso(until)}::timestamptz, claimed_by = ${claimer}::int`,
    !('bodies' in scope),
  )
}

/** Whether rows of the scope are still queued (status 0), also behind a sender's cursor. */
export async function hasQueued(ex: Executor, scope: ClaimScope): Promise<boolean> {
  const rows = await queryRows(
    ex,
    sql`SELECT 1 FROM messages m WHERE m.status = 0 AND ${scopeWhere(scope)} LIMIT 1`,
  )
  return rows.length > 0
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
  /** The subject as sent, when it differs per recipient and the row should show it (body mail). */
  subject?: string
}

export interface SentEvent {
  account_id: number
  message_id: number
  campaign_id: number
  pipeline_id: number | null
  action_id: string | null
  contact_id: number | null
  email: string
}

/**
 * Side effect, one statement: marks rows the relay accepted as sent (1), writes their `send` events and adds
 * them to the `inject` counters of their campaign or automation node. Returns the events written for the
 * accounts of `returnFor` (those with a webhook), for the webhook outbox.
 */
export async function markSent(
  on: DbHandle | Executor,
  accepted: AcceptedRow[],
  now: Date,
  returnFor: readonly number[],
): Promise<SentEvent[]> {
  if (accepted.length === 0) return []
  // Prepared when given the handle (no webhook to tell, no transaction): one of a send's hottest statements.
  const rows = await queryRowsOn<SentEvent & { message_id: string | number }>(
    on,
    sql`WITH v AS (
          SELECT * FROM jsonb_to_recordset(${JSON.stringify(accepted)}::jsonb) AS v(id bigint, "smtpMessageId" text, subject text)),
        sent AS (
          UPDATE messages SET status = 1, sent_at = ${iso(now)}::timestamptz, claimed_until = NULL,
                 smtp_message_id = v."smtpMessageId", error = NULL,
                 subject = coalesce(left(v.subject, 998), messages.subject)
          FROM v WHERE messages.id = v.id AND messages.status = 4
          RETURNING messages.id, messages.account_id, messages.campaign_id, messages.pipeline_id,
                    messages.action_id, messages.contact_id, messages.email),
        logged AS (${eventsInsertSql(
          {
            accountId: sql`account_id`,
            messageId: sql`id`,
            campaignId: sql`campaign_id`,
            pipelineId: sql`pipeline_id`,
            actionId: sql`action_id`,
            contactId: sql`contact_id`,
            email: sql`email`,
            event: sql`'send'`,
            occurredAt: sql`${iso(now)}::timestamptz`,
          },
          sql`sent`,
          sql`RETURNING account_id, message_id, campaign_id, pipeline_id, action_id, contact_id, email`,
        )}),
        counted AS (${counterIncrementsSql({
          from: sql`sent`,
          scope: {
            campaignId: sql`campaign_id`,
            pipelineId: sql`coalesce(pipeline_id, 0)`,
            actionId: sql`coalesce(action_id, '')`,
          },
          messageId: sql`id`,
          deltas: { inject: sql`count(*)` },
        })})
        SELECT * FROM logged
        WHERE account_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(returnFor)}::jsonb)::int)`,
  )
  return rows.map((r) => ({ ...r, message_id: Number(r.message_id) }))
}

/**
 * Side effect: the relay deferred these (a 4xx), or failed itself: they wait, claimed, until `retryAt`. With
 * `giveUp` (the relay's own failures, sender.ts RELAY_RETRY_MS), mail with a body row queued before
 * `giveUp.before` is given up instead: refused (2) with the error, and no bounce, as the recipient had no part in
 * it. Campaign rows always wait (their campaign shows the relay's error and is resumed by the marketer). How many
 * were given up.
 */
export async function deferClaimed(
  ex: Executor,
  ids: number[],
  error: string,
  retryAt: Date,
  giveUp?: { before: Date; now: Date },
): Promise<number> {
  if (ids.length === 0) return 0
  const stale = giveUp
    ? sql`(campaign_id = 0 AND created_at < ${iso(giveUp.before)}::timestamptz)`
    : sql`false`
  const given = `not sent: ${error}`.slice(0, 1000)
  const at = giveUp ? sql`${iso(giveUp.now)}::timestamptz` : sql`sent_at`
  const [row] = await queryRows<{ given_up: number }>(
    ex,
    sql`WITH up AS (
          UPDATE messages SET
            status = CASE WHEN ${stale} THEN 2 ELSE status END,
            claimed_until = CASE WHEN ${stale} THEN NULL ELSE ${iso(retryAt)}::timestamptz END,
            -- A deferred row waits for its time, whoever deferred it: no sender's death frees it sooner.
            claimed_by = NULL,
            sent_at = CASE WHEN ${stale} THEN ${at} ELSE sent_at END,
            error = CASE WHEN ${stale} THEN ${given} ELSE ${error.slice(0, 1000)} END
          WHERE status = 4 AND ${idIn(ids)}
          RETURNING status)
        SELECT count(*) FILTER (WHERE status = 2)::int AS given_up FROM up`,
  )
  return row?.given_up ?? 0
}

/** Side effect: gives claimed rows back to the queue (their campaign stopped while they were in hand). */
export async function releaseClaimed(ex: Executor, ids: number[]): Promise<void> {
  if (ids.length === 0) return
  await ex.execute(
    sql`UPDATE messages SET status = 0, claimed_until = NULL, claimed_by = NULL
        WHERE status = 4 AND ${idIn(ids)}`,
  )
}
