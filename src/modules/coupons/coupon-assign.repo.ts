import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'

export interface AssignRequest {
  accountId: number
  folderId: number
  /** The mails (`messages` rows) that carry the tag. */
  messageIds: number[]
  /** Recorded with a miss, so a campaign's shortfall can be found (0: not campaign mail). */
  campaignId: number
  /** YYYY-MM-DD (UTC): codes valid through an earlier day are expired. */
  today: string
  now: Date
}

/**
 * Side effect, ONE statement for a whole batch: gives each mail that has no code of the folder yet the oldest
 * free, unexpired code, and returns every mail's code (those it already had too, so a mail sent again after a
 * crash carries the code it had). Free codes are locked with SKIP LOCKED, so senders running at once take
 * different codes; the unique (message_id, folder_id) refuses a second code for one mail. Mails left without
 * a code are written to coupon_misses, and a mail's miss goes once it is given one. A folder of another account
 * gives nothing.
 */
export async function assignCodes(
  ex: Executor,
  r: AssignRequest,
): Promise<{ message_id: number; code: string }[]> {
  const rows = await queryRows<{ message_id: string | number; code: string }>(
    ex,
    sql`WITH folder AS (
          SELECT id FROM coupon_folders WHERE id = ${r.folderId} AND account_id = ${r.accountId}),
        ids AS (
          SELECT DISTINCT x::bigint AS message_id
          FROM jsonb_array_elements_text(${JSON.stringify(r.messageIds)}::jsonb) x),
        -- One index probe per mail (a join lets the planner walk every code the folder handed out).
        had AS (
          SELECT message_id, code FROM (
            SELECT ids.message_id,
                   (SELECT c.code FROM coupons c
                    WHERE c.message_id = ids.message_id AND c.folder_id = ${r.folderId}) AS code
            FROM ids) probed
          WHERE code IS NOT NULL AND EXISTS (SELECT 1 FROM folder)),
        want AS (
          SELECT message_id, row_number() OVER (ORDER BY message_id) AS rn FROM ids
          WHERE EXISTS (SELECT 1 FROM folder) AND message_id NOT IN (SELECT message_id FROM had)),
        free AS (
          SELECT id, row_number() OVER (ORDER BY created_at, id) AS rn FROM (
            -- Import order, as coupons_free_idx holds the free codes: the scan starts at the oldest one.
            SELECT c.id, c.created_at FROM coupons c
            WHERE c.folder_id = ${r.folderId} AND c.message_id IS NULL
              AND (c.valid_until IS NULL OR c.valid_until >= ${r.today}::date)
            ORDER BY c.created_at, c.id
            LIMIT (SELECT count(*) FROM want)
            FOR UPDATE SKIP LOCKED) picked),
        given AS (
          UPDATE coupons c SET message_id = want.message_id, assigned_at = ${r.now.toISOString()}::timestamptz
          FROM free JOIN want ON want.rn = free.rn
          WHERE c.id = free.id
          RETURNING c.message_id, c.code),
        missed AS (
          INSERT INTO coupon_misses (folder_id, message_id, campaign_id, occurred_at)
          SELECT (SELECT id FROM folder), message_id, ${r.campaignId}, ${r.now.toISOString()}::timestamptz
          FROM want WHERE rn > (SELECT count(*) FROM free)
          ON CONFLICT (message_id, folder_id) DO NOTHING),
        -- A mail sent again (a deferral, a lease run out) that finds a code now was not left without one.
        found AS (
          DELETE FROM coupon_misses cm USING given
          WHERE cm.message_id = given.message_id AND cm.folder_id = ${r.folderId})
        SELECT message_id, code FROM had
        UNION ALL
        SELECT message_id, code FROM given`,
  )
  return rows.map((row) => ({ message_id: Number(row.message_id), code: row.code }))
}

/** The codes a mail was given, by folder (its web version and personal links show the same code). */
export async function codesOfMessage(
  ex: Executor,
  messageId: number,
): Promise<{ folder_id: number; code: string }[]> {
  return queryRows(
    ex,
    sql`SELECT folder_id, code FROM coupons WHERE message_id = ${messageId} ORDER BY folder_id`,
  )
}

/** Whether the account's folder has a free, unexpired code now (a test copy shows a sample only then). */
export async function hasFreeCode(
  ex: Executor,
  accountId: number,
  folderId: number,
  today: string,
): Promise<boolean> {
  const row = await queryOne(
    ex,
    sql`SELECT 1 FROM coupons c JOIN coupon_folders f ON f.id = c.folder_id
        WHERE f.account_id = ${accountId} AND c.folder_id = ${folderId} AND c.message_id IS NULL
          AND (c.valid_until IS NULL OR c.valid_until >= ${today}::date)
        LIMIT 1`,
  )
  return row !== undefined
}
