import { sql, type SQL } from 'drizzle-orm'

/**
 * The sentence that tells which coupon folders had no code left for a message (its coupon_misses rows), or
 * NULL when none: SQL over an expression of the message's id. The email log shows it on the mail's `send`, the
 * automation log on the mail node's entry (contract §7: "none left: empty, and an automation-log note").
 */
export function couponMissNote(messageId: SQL): SQL {
  return sql`(SELECT 'No coupon code was left in folder ' || string_agg(cm.folder_id::text, ', ' ORDER BY cm.folder_id)
                     || ': the coupon tag rendered empty.'
              FROM coupon_misses cm WHERE cm.message_id = ${messageId})`
}
