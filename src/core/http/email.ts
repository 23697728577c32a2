/**
 * Addresses are trimmed and lower-cased on the way in: one address, one contact. The check is the practical
 * one mail providers apply (local@domain.tld, no spaces, sane lengths), not the full RFC 5322 grammar.
 */
export function normalizeEmail(value: string): string {
  return value.trim().toLowerCase()
}

const EMAIL_RE =
  /^[^\s@"(),:;<>[\\\]]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/i

export function isValidEmail(value: string): boolean {
  if (value.length > 254) return false
  const at = value.lastIndexOf('@')
  if (at < 1 || at > 64) return false
  // The local part is dot-separated words (RFC 5321 §4.1.2 Dot-string): relays refuse `.a@`, `a.@` and `a..b@`
  // (501, bad address syntax), which took them for hard bounces and suppressed them after a send.
  if (value[0] === '.' || value[at - 1] === '.' || value.slice(0, at).includes('..')) return false
  return EMAIL_RE.test(value)
}

/** `Name <address>` or `"Name" <address>`: the mailbox form mail libraries write an address with a name in. */
const MAILBOX = /^\s*(.*?)\s*<([^<>\s]*)>\s*$/s

/**
 * An address field as mail libraries fill it: a mailbox (`"Jana Nováková" <jana@example.cz>`, what a mailbox
 * object's toString() gives) yields its address and display name, unquoted; any other text is the address as it
 * is (and checked as one by the caller), with no name.
 */
export function splitMailbox(value: string): { address: string; name: string } {
  // Most addresses come bare: no regular expression for them (the transactional intake reads every recipient).
  const m = value.includes('<') ? MAILBOX.exec(value) : null
  if (!m) return { address: value, name: '' }
  let name = m[1]!
  if (name.length >= 2 && name.startsWith('"') && name.endsWith('"'))
    name = name.slice(1, -1).replace(/\\(.)/gs, '$1')
  return { address: m[2]!, name: name.trim() }
}
