import net from 'node:net'
import { v6Bytes } from '../net/address-policy.js'

const WINDOW_MS = 60_000
/** Past this many tracked clients the table starts afresh: memory stays bounded whatever the traffic. */
const MAX_CLIENTS = 100_000
/** How long a key that resolved stays vouched for: long enough to outlast a burst of others' failures. */
const VOUCH_MS = 10 * 60_000
const MAX_VOUCHED = 10_000

/**
 * The client a failure is counted against: an IPv4 address, or an IPv6 /64 (one subscriber line gets a whole
 * /64, so counting single IPv6 addresses would give an attacker 2^64 fresh budgets).
 */
export function clientOf(ip: string): string {
  const bare = ip.replace(/%.*$/, '')
  if (net.isIP(bare) !== 6) return bare
  const b = v6Bytes(bare)
  const mapped = b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff
  if (mapped) return b.slice(12).join('.')
  const hex = (i: number) => ((b[i]! << 8) | b[i + 1]!).toString(16)
  return `${hex(0)}:${hex(2)}:${hex(4)}:${hex(6)}::/64`
}

/**
 * Requests with a missing or unknown API key, counted per client address in fixed one-minute windows.
 * @fastify/rate-limit counts every request it sees before the outcome is known, and by key; this counts
 * only failed authentications, by address, so that made-up keys (a new one per request) run out of tries
 * instead of each costing a key lookup. Per process, like the plugin's own store.
 */
export class AuthFailureLimiter {
  private readonly failures = new Map<string, { count: number; windowEnd: number }>()
  private readonly vouched = new Map<string, number>()

  constructor(readonly limit: number) {}

  /** Seconds until `ip` may try an unknown key again; 0 when it may now. */
  retryAfter(ip: string, now: number): number {
    const entry = this.failures.get(clientOf(ip))
    if (!entry || entry.windowEnd <= now || entry.count < this.limit) return 0
    return Math.max(1, Math.ceil((entry.windowEnd - now) / 1000))
  }

  failed(ip: string, now: number): void {
    const client = clientOf(ip)
    const entry = this.failures.get(client)
    if (entry && entry.windowEnd > now) {
      entry.count++
      return
    }
    if (this.failures.size >= MAX_CLIENTS) this.failures.clear()
    this.failures.set(client, { count: 1, windowEnd: now + WINDOW_MS })
  }

  /**
   * A key that resolved to an account: it is still looked up (revocation holds) while its address is blocked,
   * so a client sharing an address with a guesser (NAT, one proxy) keeps working. Guessed keys never get here.
   */
  vouch(keyHash: string, now: number): void {
    if (this.vouched.size >= MAX_VOUCHED && !this.vouched.has(keyHash)) this.vouched.clear()
    this.vouched.set(keyHash, now + VOUCH_MS)
  }

  isVouched(keyHash: string, now: number): boolean {
    const until = this.vouched.get(keyHash)
    return until !== undefined && until > now
  }
}
