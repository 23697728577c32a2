import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'

const iso = (d: Date) => d.toISOString()

export interface FolderRow {
  id: number
  name: string
  is_default: boolean
  created_at: Date | string
  total: number
  available: number
  assigned: number
  missed: number
}

/** A folder with its counts; `today` (YYYY-MM-DD, UTC) decides which free codes have expired. */
const folderColumns = (today: string) => sql`f.id, f.name, f.is_default, f.created_at,
  (SELECT count(*)::int FROM coupons c WHERE c.folder_id = f.id) AS total,
  (SELECT count(*)::int FROM coupons c WHERE c.folder_id = f.id AND c.message_id IS NULL
     AND (c.valid_until IS NULL OR c.valid_until >= ${today}::date)) AS available,
  (SELECT count(*)::int FROM coupons c WHERE c.folder_id = f.id AND c.message_id IS NOT NULL) AS assigned,
  (SELECT count(*)::int FROM coupon_misses m WHERE m.folder_id = f.id) AS missed`

export const DEFAULT_FOLDER_NAME = 'Default'

/** Side effect: creates the account's default folder unless it has one (safe when two requests race); its id. */
export async function ensureDefaultFolder(ex: Executor, accountId: number, now: Date): Promise<number> {
  await ex.execute(
    sql`INSERT INTO coupon_folders (account_id, name, is_default, created_at)
        VALUES (${accountId}, ${DEFAULT_FOLDER_NAME}, true, ${iso(now)}::timestamptz)
        ON CONFLICT (account_id) WHERE is_default DO NOTHING`,
  )
  const row = await queryOne<{ id: number }>(
    ex,
    sql`SELECT id FROM coupon_folders WHERE account_id = ${accountId} AND is_default`,
  )
  return row!.id
}

/** Side effect: a new folder; its id. */
export async function insertFolder(
  ex: Executor,
  accountId: number,
  name: string,
  now: Date,
): Promise<number> {
  const row = await queryOne<{ id: number }>(
    ex,
    sql`INSERT INTO coupon_folders (account_id, name, created_at)
        VALUES (${accountId}, ${name}, ${iso(now)}::timestamptz) RETURNING id`,
  )
  return row!.id
}

export function listFolders(ex: Executor, accountId: number, today: string): Promise<FolderRow[]> {
  return queryRows<FolderRow>(
    ex,
    sql`SELECT ${folderColumns(today)} FROM coupon_folders f WHERE f.account_id = ${accountId}
        ORDER BY f.is_default DESC, f.id`,
  )
}

export function findFolder(
  ex: Executor,
  accountId: number,
  id: number,
  today: string,
): Promise<FolderRow | undefined> {
  return queryOne<FolderRow>(
    ex,
    sql`SELECT ${folderColumns(today)} FROM coupon_folders f WHERE f.account_id = ${accountId} AND f.id = ${id}`,
  )
}

export async function folderExists(ex: Executor, accountId: number, id: number): Promise<boolean> {
  const row = await queryOne(
    ex,
    sql`SELECT 1 FROM coupon_folders WHERE account_id = ${accountId} AND id = ${id}`,
  )
  return row !== undefined
}

/**
 * Side effect, one statement: adds the codes (distinct, in the order given: that order is the order they are
 * handed out in) to the folder. An existing code is left alone, or with `update` gets this `valid_until`.
 */
export async function insertCodes(
  ex: Executor,
  folderId: number,
  codes: string[],
  validUntil: string | null,
  update: boolean,
  now: Date,
): Promise<{ inserted: number; updated: number }> {
  const onConflict = update ? sql`DO UPDATE SET valid_until = excluded.valid_until` : sql`DO NOTHING`
  const row = await queryOne<{ inserted: number; updated: number }>(
    ex,
    sql`WITH input AS (
          SELECT code, ord FROM jsonb_array_elements_text(${JSON.stringify(codes)}::jsonb)
            WITH ORDINALITY AS x(code, ord)),
        written AS (
          INSERT INTO coupons (folder_id, code, valid_until, created_at)
          SELECT ${folderId}, code, ${validUntil}::date, ${iso(now)}::timestamptz FROM input ORDER BY ord
          ON CONFLICT (folder_id, code) ${onConflict}
          -- xmax is 0 on a row this statement inserted, and set on one it updated.
          RETURNING (xmax = 0) AS inserted)
        SELECT count(*) FILTER (WHERE inserted)::int AS inserted,
               count(*) FILTER (WHERE NOT inserted)::int AS updated
        FROM written`,
  )
  return row ?? { inserted: 0, updated: 0 }
}

export async function countCodes(ex: Executor, folderId: number): Promise<number> {
  const row = await queryOne<{ n: number }>(
    ex,
    sql`SELECT count(*)::int AS n FROM coupons WHERE folder_id = ${folderId}`,
  )
  return row?.n ?? 0
}

/** Side effect: deletes these codes of the folder (handed out or not); how many there were. */
export async function deleteCodes(ex: Executor, folderId: number, codes: string[]): Promise<number> {
  const row = await queryOne<{ n: number }>(
    ex,
    sql`WITH gone AS (
          DELETE FROM coupons WHERE folder_id = ${folderId}
            AND code IN (SELECT jsonb_array_elements_text(${JSON.stringify(codes)}::jsonb))
          RETURNING 1)
        SELECT count(*)::int AS n FROM gone`,
  )
  return row?.n ?? 0
}
