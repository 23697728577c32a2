import { signToken, verifyToken } from '../ids.js'

/**
 * VERP envelope senders: `bounces+<token>@<bounce domain>`, token = signToken(secret, 'verp', messageRef).
 *
 * The token is base64url ("A-Z a-z 0-9 - _") with one "." between two non-empty halves, so the local part
 * `bounces+<body>.<mac>` is a plain RFC 5321 dot-string: every character is atext, the single dot is neither
 * first, last nor doubled. No quoting is needed and MTAs pass it through unchanged. It is case-sensitive,
 * as RFC 5321 lets local parts be; an MTA that folded case would break the signature, which is why the
 * classifier also digs the envelope sender out of the returned original headers.
 */
const PREFIX = 'bounces+'
const PURPOSE = 'verp'
/** RFC 5321 4.5.3.1.1: longer local parts are refused by many MTAs, so we refuse to mint them. */
const MAX_LOCAL_PART = 64
const TOKEN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

export function verpAddress(secret: string, messageRef: string, domain: string): string {
  if (!messageRef) throw new RangeError('VERP message reference must not be empty')
  const local = PREFIX + signToken(secret, PURPOSE, messageRef)
  if (local.length > MAX_LOCAL_PART) {
    throw new RangeError(`VERP local part would be ${local.length} octets (max ${MAX_LOCAL_PART})`)
  }
  return `${local}@${domain.toLowerCase()}`
}

/**
 * The message reference a VERP address was minted for, or null when it is not one of ours (wrong prefix,
 * bad or tampered signature, garbage). Accepts the forms addresses arrive in: bare, `<...>` as in
 * Return-Path, and a quoted local part. The domain is not checked (any case, any of our bounce domains):
 * the signature is what proves the address is ours.
 */
export function parseVerpAddress(secret: string, address: string): string | null {
  let value = address.trim()
  if (value.startsWith('<') && value.endsWith('>')) value = value.slice(1, -1).trim()
  const at = value.lastIndexOf('@')
  if (at <= 0 || at === value.length - 1) return null
  let local = value.slice(0, at)
  if (local.length > 2 && local.startsWith('"') && local.endsWith('"')) local = local.slice(1, -1)
  if (local.slice(0, PREFIX.length).toLowerCase() !== PREFIX) return null
  const token = local.slice(PREFIX.length)
  if (!TOKEN.test(token)) return null
  return verifyToken(secret, PURPOSE, token)
}
