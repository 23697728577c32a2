import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'

export interface BounceStamp {
  /** The first bounce of this kind (hard or soft) for the message. */
  firstOfKind: boolean
  /** The first bounce of any kind: `bounce` counts a message once, whichever kind came first. */
  firstBounce: boolean
  /** The relay refused the message itself (status 2): it was never injected, so statistics leave it out. */
  refused: boolean
}

/**
 * Side effect: stamps `bounced_at` (hard) or `soft_bounced_at` (soft) the first time, reading both stamps as
 * they were under the row lock in the same statement, so concurrent reports of one message count it once.
 * Undefined when the message does not exist.
 */
export async function stampBounce(
  ex: Executor,
  messageId: number,
  kind: 'hard' | 'soft',
  at: Date,
): Promise<BounceStamp | undefined> {
  const col = sql.raw(kind === 'hard' ? 'bounced_at' : 'soft_bounced_at')
  const row = await queryOne<{ first_of_kind: boolean; first_bounce: boolean; status: number }>(
    ex,
    sql`WITH before AS (
          SELECT bounced_at, soft_bounced_at, status FROM messages WHERE id = ${messageId} FOR UPDATE)
        UPDATE messages SET ${col} = COALESCE(messages.${col}, ${at.toISOString()}::timestamptz)
        FROM before WHERE messages.id = ${messageId}
        RETURNING (before.${col} IS NULL) AS first_of_kind,
                  (before.bounced_at IS NULL AND before.soft_bounced_at IS NULL) AS first_bounce,
                  before.status`,
  )
  if (!row) return undefined
  return { firstOfKind: row.first_of_kind, firstBounce: row.first_bounce, refused: Number(row.status) === 2 }
}
