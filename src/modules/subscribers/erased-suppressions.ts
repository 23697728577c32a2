import { createHmac } from 'node:crypto'

/**
 * The keyed hash under which an erased suppressed address is remembered (erased-suppressions.table.ts):
 * HMAC-SHA256 keyed with the installation's erasure secret, so it cannot be reversed by hashing known
 * addresses, over the account and the normalised address, so the same person in two accounts gives two hashes.
 * Computed here rather than in SQL so the secret never travels in a query.
 */
export function erasedAddressHash(secret: string, accountId: number, email: string): string {
  return createHmac('sha256', secret).update(`${accountId}:${email}`).digest('hex')
}
