import { domainToASCII } from 'node:url'

/** One DNS label of a host name (RFC 1123): letters, digits, inner hyphens, 1–63 octets. */
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/**
 * Longest name we accept: `<selector>._domainkey.<name>` must still fit the 253 octets of a DNS name, and
 * selectors are at most 12 characters (dkim-keys.ts), so 24 octets are kept free.
 */
export const MAX_DOMAIN_LENGTH = 253 - 24

/** Case and a trailing root dot do not make another domain: `Shop.CZ.` is `shop.cz`. */
function canonical(raw: string): string {
  const name = raw.trim().toLowerCase()
  return name.endsWith('.') ? name.slice(0, -1) : name
}

/**
 * The domain name as stored and published, or undefined when it is not a host name mail can be sent from.
 * International names are stored in their ASCII (punycode) form, which is what DNS and DKIM's `d=` carry.
 * A bare label (`localhost`) or an all-numeric top label (an IPv4 literal) is refused.
 */
export function parseDomainName(raw: string): string | undefined {
  let name = canonical(raw)
  if (/[^\x20-\x7e]/.test(name)) name = domainToASCII(name)
  if (!name || name.length > MAX_DOMAIN_LENGTH) return undefined
  const labels = name.split('.')
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return undefined
  if (/^\d+$/.test(labels[labels.length - 1]!)) return undefined
  return name
}

/** True when the name given was blank, so the client hears "required" rather than "invalid". */
export function isBlankName(raw: string): boolean {
  return canonical(raw) === ''
}
