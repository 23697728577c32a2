import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryRows } from '../../core/db/sql.js'
import {
  batchWithMembers,
  insertColumns,
  insertValues,
  keepUnlessGiven,
  membershipOnly,
  tagSignals,
  ts,
  type BulkEntry,
} from './bulk-batch.repo.js'
import { listenedFor } from '../signals/index.js'
import { erasedReason } from './erased-suppressions.repo.js'

/**
 * subscribe-bulk in four set-based statements, run in this order inside one transaction; each returns the
 * contact ids it wrote, so the service can count the addresses written.
 */

export interface JoinOptions {
  accountId: number
  listId: number
  resubscribe: boolean
  now: Date
}

const ids = (rows: { id: number }[]) => rows.map((r) => r.id)

/**
 * Step 1: creates the contacts not yet in the account and, when `updateExisting`, writes the given fields
 * of the others (tags given replace the stored ones, as subscribe's do; a `tag` signal names the tags each gains). Both writes run on one snapshot, so the
 * update never sees, nor re-writes, the rows the insert just made; ON CONFLICT DO NOTHING lets a concurrent
 * import of the same address win instead of failing. A new contact whose address was erased while suppressed
 * (found by each entry's `addressHash`: one index probe per new contact, in the same statement) is created
 * suppressed again, and the remembered row goes: the suppression lives on the contact from then on.
 */
export async function upsertContacts(
  ex: Executor,
  entries: BulkEntry[],
  o: JoinOptions & { updateExisting: boolean },
): Promise<number[]> {
  const rows = await queryRows<{ id: number }>(
    ex,
    sql`WITH b AS MATERIALIZED (${batchWithMembers(entries, o.accountId, o.listId, { lockContacts: o.updateExisting ? 'update' : 'share' })}),
        ins AS (
          INSERT INTO contacts (account_id, email, ${insertColumns}, rating, tags, groups, custom_fields,
                                suppressed, inserted_at, updated_at)
          SELECT ${o.accountId}, b.email, ${insertValues}, coalesce(b.rating, 0), coalesce(b.tags, '{}'),
                 coalesce(b.groups, '{}'::jsonb), coalesce(b.custom_fields, '{}'::jsonb),
                 ${erasedReason(o.accountId, sql`b.address_hash`)}, ${ts(o.now)}, ${ts(o.now)}
          FROM b WHERE b.contact_id IS NULL
          ON CONFLICT (account_id, email) DO NOTHING
          RETURNING id, email, suppressed),
        ${tagSignals(o.accountId, sql`(b.contact_id IS NULL AND b.email IN (SELECT email FROM ins)) OR (b.contact_id IS NOT NULL AND ${o.updateExisting})`, o.now)},
        restored AS (
          DELETE FROM erased_suppressions e USING ins, b
          WHERE ins.suppressed IS NOT NULL AND b.email = ins.email
            AND e.account_id = ${o.accountId} AND e.address_hash = b.address_hash
          RETURNING 1),
        upd AS (
          UPDATE contacts c SET ${keepUnlessGiven()},
            tags = coalesce(b.tags, c.tags),
            updated_at = ${ts(o.now)}
          FROM b
          WHERE ${o.updateExisting} AND c.id = b.contact_id
          RETURNING c.id)
        SELECT id FROM ins UNION ALL SELECT id FROM upd`,
  )
  return ids(rows)
}

/** Step 2, with resubscribe only: entries asking for status 1 lift their account-wide suppression. */
export async function liftSuppressions(
  ex: Executor,
  entries: BulkEntry[],
  o: JoinOptions,
): Promise<number[]> {
  const rows = await queryRows<{ id: number }>(
    ex,
    sql`UPDATE contacts c SET suppressed = NULL, updated_at = ${ts(o.now)}
        FROM (${batchWithMembers(membershipOnly(entries), o.accountId, o.listId)}) b
        WHERE c.id = b.contact_id AND b.suppressed IS NOT NULL AND coalesce(b.status, 1) = 1
        RETURNING c.id`,
  )
  return ids(rows)
}

/**
 * Step 3, existing members (an entry asks for 1 unless it says 2): 2 unsubscribes a subscribed or
 * unconfirmed member; 1 confirms an unconfirmed one and, only with `resubscribe`, brings back an
 * unsubscribed, bounced or complained one. The CASE reads `m.status` of the row as updated, so a concurrent
 * change is decided on, not overwritten. Leaving stamps unsubscribed_at; coming back starts a new subscribed_at.
 */
export async function moveMemberships(ex: Executor, entries: BulkEntry[], o: JoinOptions): Promise<number[]> {
  const next = sql`(CASE
      WHEN coalesce(b.status, 1) = 2 THEN CASE WHEN m.status IN (1, 6) THEN 2 ELSE m.status END
      WHEN m.status IN (1, 6) THEN 1
      WHEN ${o.resubscribe} THEN 1
      ELSE m.status END)`
  const rows = await queryRows<{ id: number }>(
    ex,
    sql`UPDATE memberships m SET
          status = ${next},
          unsubscribed_at = CASE WHEN ${next} = 2 THEN ${ts(o.now)} ELSE NULL END,
          subscribed_at = CASE WHEN m.status IN (2, 4, 5) THEN ${ts(o.now)} ELSE m.subscribed_at END,
          updated_at = ${ts(o.now)}
        FROM (${batchWithMembers(membershipOnly(entries), o.accountId, o.listId)}) b
        WHERE m.id = b.membership_id AND m.status <> ${next}
        RETURNING m.contact_id AS id`,
  )
  return ids(rows)
}

/**
 * Step 4, contacts not yet in the list: status 1, or the 2 asked for; a suppressed contact (not lifted in
 * step 2) joins in its suppressed state, 4 or 5. A concurrent writer of the same pair wins (DO NOTHING).
 */
export async function insertMemberships(
  ex: Executor,
  entries: BulkEntry[],
  o: JoinOptions,
): Promise<number[]> {
  const rows = await queryRows<{ id: number }>(
    ex,
    sql`INSERT INTO memberships (account_id, list_id, contact_id, status, source, subscribed_at,
                                 unsubscribed_at, updated_at)
        SELECT ${o.accountId}, ${o.listId}, s.contact_id, s.status, s.source, ${ts(o.now)},
               CASE WHEN s.status = 2 THEN ${ts(o.now)} END, ${ts(o.now)}
        FROM (SELECT b.contact_id, coalesce(b.source, 'api') AS source,
                     CASE WHEN b.suppressed = 'hard_bounce' THEN 4
                          WHEN b.suppressed = 'complaint' THEN 5
                          ELSE coalesce(b.status, 1) END AS status
              FROM (${batchWithMembers(membershipOnly(entries), o.accountId, o.listId)}) b
              WHERE b.contact_id IS NOT NULL AND b.membership_id IS NULL) s
        ON CONFLICT (list_id, contact_id) DO NOTHING
        RETURNING contact_id AS id`,
  )
  return ids(rows)
}

/**
 * With trigger_autoresponders: a `subscribe` signal (the automations' outbox) for each of `contactIds` (the
 * memberships steps 3 and 4 wrote) that is now subscribed to the list, when an automation of the account
 * listens for subscribes. One statement per batch.
 */
export async function emitSubscribeSignals(
  ex: Executor,
  contactIds: number[],
  o: JoinOptions,
): Promise<void> {
  if (contactIds.length === 0) return
  await ex.execute(
    sql`INSERT INTO signals (account_id, kind, email, payload, created_at)
        SELECT ${o.accountId}, 'subscribe', c.email, jsonb_build_object('list_id', ${o.listId}::int), ${ts(o.now)}
        FROM memberships m JOIN contacts c ON c.id = m.contact_id
        WHERE m.list_id = ${o.listId} AND m.status = 1 AND ${listenedFor(o.accountId, 'subscribe')}
          AND m.contact_id IN (SELECT (jsonb_array_elements_text(${JSON.stringify(contactIds)}::jsonb))::int)`,
  )
}
