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

/** The domain of the stand-in that replaces an erased address in the rows that keep it (subscriber-delete). */
export const ERASED_DOMAIN = 'erased.invalid'

/** True for an erased address's stand-in: a row that still names it belongs to nobody any more. */
export const isErasedStandIn = (email: string) => email.endsWith(`@${ERASED_DOMAIN}`)
