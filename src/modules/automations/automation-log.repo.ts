import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import { couponMissNote } from '../coupons/index.js'
import { contacts } from '../subscribers/index.js'

export type LogSort = 'timestamp' | 'id' | 'pipeline_id'
export type SortDir = 'asc' | 'desc'

export interface AutomationLogRow {
  id: number | string
  account_id: number
  pipeline_id: number
  run_id: number | string
  action_id: string
  email: string
  props: Record<string, unknown> | null
  next: unknown
  /** created_at as `YYYY-MM-DDTHH:MM:SS.ffffffZ`, formatted by PostgreSQL so the microseconds survive. */
  ts: string
}

/** Fixed column text per sort key: nothing the client sends is written into the statement. */
const SORT_COLUMNS: Record<LogSort, string> = {
  timestamp: 'created_at',
  id: 'id',
  pipeline_id: 'pipeline_id',
}

/**
 * A mail node's props with `note` when its `*|COUPON:n|*` found the folder empty (the mail went with the tag
 * empty): known only once the sender handed out codes, after the node's entry was written, so read with it.
 */
const withCouponNote = sql`(CASE WHEN jsonb_typeof(props -> 'message_id') = 'number'
    THEN props || jsonb_strip_nulls(jsonb_build_object('note', ${couponMissNote(sql`(props ->> 'message_id')::bigint`)}))
    ELSE props END)`

/**
 * One page of an address's automation log. Both statements read `automation_log_contact_idx` (account_id,
 * email, id): a subscriber's log is small, so any order is a sort of that one index range; ties are broken by
 * id in the same direction, so pages never overlap.
 */
export async function automationLogPage(
  ex: Executor,
  accountId: number,
  email: string,
  sort: LogSort,
  dir: SortDir,
  limit: number,
  offset: number,
): Promise<{ rows: AutomationLogRow[]; total: number }> {
  const direction = sql.raw(dir === 'asc' ? 'ASC' : 'DESC')
  const column = sql.raw(SORT_COLUMNS[sort])
  const rows = await queryRows<AutomationLogRow>(
    ex,
    sql`SELECT id, account_id, pipeline_id, run_id, action_id, email, next,
               ${withCouponNote} AS props,
               to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ts
        FROM automation_log
        WHERE account_id = ${accountId}::int AND email = ${email}::text
        ORDER BY ${column} ${direction}, id ${direction}
        LIMIT ${limit} OFFSET ${offset}`,
  )
  const count = await queryOne<{ n: number }>(
    ex,
    sql`SELECT count(*)::int AS n FROM automation_log WHERE account_id = ${accountId}::int AND email = ${email}::text`,
  )
  return { rows, total: count?.n ?? 0 }
}

/** Whether the address is a contact of the account (an empty log of a stranger answers 404). */
export async function isContact(ex: Executor, accountId: number, email: string): Promise<boolean> {
  const row = await queryOne<{ known: boolean }>(
    ex,
    sql`SELECT EXISTS (SELECT 1 FROM ${contacts} WHERE ${contacts.accountId} = ${accountId}
                         AND ${contacts.email} = ${email}) AS known`,
  )
  return row?.known === true
}
