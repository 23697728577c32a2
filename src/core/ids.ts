import crypto, { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

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
  const recent = recentTokensOf(secret, purpose)
  const known = recent.get(payload)
  if (known !== undefined) return known
  const body = Buffer.from(payload, 'utf8').toString('base64url')
  const token = `${body}.${mac(secret, purpose, body)}`
  if (recent.size >= RECENT_TOKENS) recent.clear()
  recent.set(payload, token)
  return token
}

/**
 * The MAC part of signToken's token for `payload`, neither cached nor joined to the payload: for a value signed
 * once and never verified as a token (a Message-ID: every message's payload differs, so signToken's cache of
 * recent tokens would only churn, on the send path).
 */
export function tokenMac(secret: string, purpose: string, payload: string): string {
  return mac(secret, purpose, Buffer.from(payload, 'utf8').toString('base64url'))
}

/**
 * The last tokens signed, by secret, purpose and payload: one campaign message signs each of its links in the
 * HTML, again in the text part, and its unsubscribe token in two headers and the body, so about half its HMACs
 * are repeats. A few messages' worth; a token is a pure function of its inputs, so a cached one is the one
 * signing would give. Keyed by level rather than by one joined string: joining the secret into a key for each of
 * a message's sixteen lookups cost more than the lookups (about 5 µs a campaign message, microbenchmark).
 */
const recentTokens = new Map<string, Map<string, Map<string, string>>>()
const RECENT_TOKENS = 64

function recentTokensOf(secret: string, purpose: string): Map<string, string> {
  let bySecret = recentTokens.get(secret)
  if (bySecret === undefined) {
    // A process signs with its instance secret, and tests with a few of their own.
    if (recentTokens.size >= PADS_MAX) recentTokens.clear()
    bySecret = new Map()
    recentTokens.set(secret, bySecret)
  }
  let byPurpose = bySecret.get(purpose)
  if (byPurpose === undefined) {
    // Purposes are the link kinds, a handful; a bound all the same.
    if (bySecret.size >= RECENT_TOKENS) bySecret.clear()
    byPurpose = new Map()
    bySecret.set(purpose, byPurpose)
  }
  return byPurpose
}

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
  return hmacSha256(secret, `${purpose}:${body}`).subarray(0, 16).toString('base64url')
}

/** One-shot SHA-256 (Node 20.12+; engines allow 20.11, which takes createHmac below). */
const oneShotHash = (crypto as { hash?: typeof crypto.hash }).hash

/** A secret's HMAC pads (RFC 2104) as strings, for secrets of ASCII characters that fit a block. */
const padsBySecret = new Map<string, { inner: string; outer: Buffer } | null>()
/** A process signs with its instance secret, and tests with a few of their own. */
const PADS_MAX = 8

function padsOf(secret: string) {
  let pads = padsBySecret.get(secret)
  if (pads === undefined) {
    pads = null
    // Instance secrets are base64url; another secret (or no one-shot hash) takes createHmac.
    if (oneShotHash && /^[\x00-\x7f]{0,64}$/.test(secret)) {
      const key = Buffer.alloc(64)
      key.write(secret, 'latin1')
      // ASCII bytes XOR 0x36 stay ASCII, so the inner pad is a string hashed as written.
      const inner = Buffer.from(key.map((b) => b ^ 0x36)).toString('latin1')
      const outer = Buffer.alloc(96)
      for (let i = 0; i < 64; i++) outer[i] = key[i]! ^ 0x5c
      pads = { inner, outer }
    }
    if (padsBySecret.size >= PADS_MAX) padsBySecret.clear()
    padsBySecret.set(secret, pads)
  }
  return pads
}

/**
 * HMAC-SHA256 of an ASCII message, as createHmac gives it. Built from two one-shot hashes of OpenSSL's rather
 * than an Hmac object per token: a campaign message signs about seven tokens, and an Hmac object each cost
 * about 4 µs a token against under 2 for the two hashes (profiled in the signing threads, issue 11). Checked
 * against createHmac in the tests.
 */
export function hmacSha256(secret: string, message: string): Buffer {
  const pads = padsOf(secret)
  if (!pads || !oneShotHash || !/^[\x00-\x7f]*$/.test(message))
    return createHmac('sha256', secret).update(message).digest()
  const inner = oneShotHash('sha256', pads.inner + message, 'buffer')
  // The outer pad's last 32 bytes take the inner digest; hashed at once, so sharing the buffer is safe.
  inner.copy(pads.outer, 64)
  return oneShotHash('sha256', pads.outer, 'buffer')
}
