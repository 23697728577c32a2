import { signToken, verifyToken } from '../../core/ids.js'

/** The membership a confirm link stands for; the token signs exactly this pair. */
export interface ConfirmTarget {
  listId: number
  contactId: number
}

const PURPOSE = 'confirm'
const MAX_ID = 2_147_483_647

export function confirmUrl(publicUrl: string, secret: string, target: ConfirmTarget): string {
  return `${publicUrl}/confirm/${signToken(secret, PURPOSE, `${target.listId}.${target.contactId}`)}`
}

/** The target of a genuine token; null for anything tampered, malformed or minted for another purpose. */
export function readConfirmToken(secret: string, token: string): ConfirmTarget | null {
  const payload = verifyToken(secret, PURPOSE, token)
  const m = payload === null ? null : /^(\d{1,10})\.(\d{1,10})$/.exec(payload)
  if (!m) return null
  const listId = Number(m[1])
  const contactId = Number(m[2])
  // Ids are int4 columns: anything larger would make PostgreSQL fail the query instead of finding nothing.
  if (listId < 1 || contactId < 1 || listId > MAX_ID || contactId > MAX_ID) return null
  return { listId, contactId }
}
