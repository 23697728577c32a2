import { hmacSha256 } from '../../core/ids.js'

/**
 * The keyed hash under which an erased suppressed address is remembered (erased-suppressions.table.ts):
 * HMAC-SHA256 keyed with the installation's erasure secret, so it cannot be reversed by hashing known
 * addresses, over the account and the normalised address, so the same person in two accounts gives two hashes.
 * Computed here rather than in SQL so the secret never travels in a query; by core's HMAC, which makes no Hmac
 * object per address (every imported subscriber and every transactional recipient is looked up by it).
 */
export function erasedAddressHash(secret: string, accountId: number, email: string): string {
  return hmacSha256(secret, `${accountId}:${email}`).toString('hex')
}

const ERASED_DOMAIN = 'erased.invalid'

/**
 * A stable stand-in for an erased address, in every row that kept it: keyed with the installation secret so it
 * cannot be reversed by hashing known addresses, and the same for every row, so logs still count one person.
 */
export function erasedStandIn(secret: string, accountId: number, email: string): string {
  const h = hmacSha256(secret, `erase:${accountId}:${email}`).toString('hex').slice(0, 24)
  return `erased-${h}@${ERASED_DOMAIN}`
}

/** True for an erased address's stand-in: a row that still names it belongs to nobody any more. */
export const isErasedStandIn = (email: string) => email.endsWith(`@${ERASED_DOMAIN}`)
