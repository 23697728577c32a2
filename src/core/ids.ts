import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/** API keys carry 32 random bytes; only their SHA-256 is ever stored. */
export function newApiKey(): string {
  return randomBytes(32).toString('base64url')
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex')
}

export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url')
}

/**
 * Signed, URL-safe tokens for links in mail (confirm, unsubscribe, tracking).
 * Layout: base64url(payload) "." base64url(HMAC-SHA256(secret, purpose + payload)) truncated to 16 bytes;
 * the purpose keeps a token minted for one link kind from being replayed on another.
 */
export function signToken(secret: string, purpose: string, payload: string): string {
  const key = `${purpose}\n${payload}\n${secret}`
  const known = recentTokens.get(key)
  if (known) return known
  const body = Buffer.from(payload, 'utf8').toString('base64url')
  const token = `${body}.${mac(secret, purpose, body)}`
  if (recentTokens.size >= RECENT_TOKENS) recentTokens.clear()
  recentTokens.set(key, token)
  return token
}

/**
 * The last tokens signed: one campaign message signs each of its links in the HTML, again in the text part,
 * and its unsubscribe token in two headers and the body, so about half its HMACs are repeats. A few
 * messages' worth; a token is a pure function of its inputs, so a cached one is the one signing would give.
 */
const recentTokens = new Map<string, string>()
const RECENT_TOKENS = 64

export function verifyToken(secret: string, purpose: string, token: string): string | null {
  const dot = token.indexOf('.')
  if (dot <= 0) return null
  const body = token.slice(0, dot)
  // Compare the encoded strings, not decoded bytes: base64url's last character has bits a decoder ignores,
  // and an edited token must not verify.
  const given = Buffer.from(token.slice(dot + 1), 'utf8')
  const expected = Buffer.from(mac(secret, purpose, body), 'utf8')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
  return Buffer.from(body, 'base64url').toString('utf8')
}

function mac(secret: string, purpose: string, body: string): string {
  return createHmac('sha256', secret)
    .update(`${purpose}:${body}`)
    .digest()
    .subarray(0, 16)
    .toString('base64url')
}
