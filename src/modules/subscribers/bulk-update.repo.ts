import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'
import { batchWithMembers, keepUnlessGiven, tagSignals, ts, type BulkEntry } from './bulk-batch.repo.js'

export interface UpdateOptions {
  accountId: number
  listId: number
  allowResubscribe: boolean
  now: Date
}

/**
 * update-subscribers-bulk (and update-subscriber): one statement, its writes on one snapshot, atomic without
 * a transaction around it.
 * Contacts of the list's members get the given fields (tags overwritten, custom fields and groups merged; a
 * `tag` signal for the automations names the tags each did not have before);
 * status 4 suppresses the address account-wide, moves its live memberships in other lists to 4 too, and counts
 * a hard bounce (once per move to 4); status 1 with `allowResubscribe` lifts a suppression. Memberships: 2 and 4 always apply; 1 applies to a subscribed or
 * unconfirmed member, and to an unsubscribed, bounced or complained one only with `allowResubscribe`;
 * otherwise the status stays while the fields still update. Addresses not in the list are left alone.
 * Returns how many members were updated.
 */
export async function updateMembers(ex: Executor, entries: BulkEntry[], o: UpdateOptions): Promise<number> {
  // Reads `m.status` of the row being updated, so a concurrent change is decided on, not overwritten.
  const next = sql`(CASE
      WHEN b.status IS NULL THEN m.status
      WHEN b.status IN (2, 4) THEN b.status
      WHEN b.status = 1 AND (m.status IN (1, 6) OR ${o.allowResubscribe}) THEN 1
      ELSE m.status END)`
  const row = await queryOne<{ updates: number }>(
    ex,
    sql`WITH b AS MATERIALIZED (
          SELECT * FROM (${batchWithMembers(entries, o.accountId, o.listId, { lockContacts: 'update' })}) x
          WHERE x.membership_id IS NOT NULL),
        ${tagSignals(o.accountId, sql`b.contact_id IS NOT NULL`, o.now)},
        upd_contacts AS (
          UPDATE contacts c SET ${keepUnlessGiven()},
            tags = coalesce(b.tags, c.tags),
            suppressed = CASE WHEN b.status = 4 THEN 'hard_bounce'
                              WHEN b.status = 1 AND ${o.allowResubscribe} THEN NULL
                              ELSE c.suppressed END,
            bounced_hard = c.bounced_hard + CASE WHEN b.status = 4 AND b.was <> 4 THEN 1 ELSE 0 END,
            updated_at = ${ts(o.now)}
          FROM b
          WHERE c.id = b.contact_id
          RETURNING c.id),
        upd_members AS (
          UPDATE memberships m SET
            status = ${next},
            unsubscribed_at = CASE WHEN ${next} = 2 AND m.status <> 2 THEN ${ts(o.now)}
                                   WHEN ${next} IN (1, 6) THEN NULL
                                   ELSE m.unsubscribed_at END,
            subscribed_at = CASE WHEN m.status IN (2, 4, 5) AND ${next} = 1 THEN ${ts(o.now)}
                                 ELSE m.subscribed_at END,
            source = coalesce(b.source, m.source),
            updated_at = ${ts(o.now)}
          FROM b
          WHERE m.id = b.membership_id
            AND (m.status <> ${next} OR (b.source IS NOT NULL AND b.source <> m.source))
          RETURNING m.id),
        -- A hard bounce is the address's, not the list's: its live memberships elsewhere go to 4 too, as a
        -- bounce from the relay moves them (applyHardBounce); they counted as subscribed, suppressed as they were.
        upd_elsewhere AS (
          UPDATE memberships m SET status = 4, updated_at = ${ts(o.now)}
          FROM b
          WHERE b.status = 4 AND m.contact_id = b.contact_id AND m.list_id <> ${o.listId} AND m.status IN (1, 6)
          RETURNING m.id)
        SELECT (SELECT count(*) FROM upd_contacts)::int AS updates,
               (SELECT count(*) FROM upd_elsewhere)::int AS elsewhere,
               (SELECT count(*) FROM upd_members)::int AS moved`,
  )
  return row?.updates ?? 0
}
