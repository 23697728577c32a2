import type { AuthAccount } from '../../core/http/auth.js'

/**
 * Resolved API keys, kept for one second per process: under load every request of a client carries the same
 * key, and the lookup was a third of the database round trips of a cheap read. A revocation or plan change
 * made through this process clears the cache at once; one made through another process (the CLI, another
 * API node) takes effect here within TTL_MS.
 */
export const TTL_MS = 1000
const MAX_ENTRIES = 10_000

export class KeyCache {
  private readonly entries = new Map<string, { account: AuthAccount; until: number }>()

  get(keyHash: string, now: number): AuthAccount | undefined {
    const e = this.entries.get(keyHash)
    if (!e) return undefined
    if (e.until <= now) {
      this.entries.delete(keyHash)
      return undefined
    }
    return e.account
  }

  set(keyHash: string, account: AuthAccount, now: number): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear()
    this.entries.set(keyHash, { account, until: now + TTL_MS })
  }

  clear(): void {
    this.entries.clear()
  }
}

const caches = new WeakMap<object, KeyCache>()

/** One cache per application context (tests run several in one process). */
export function keyCacheFor(owner: object): KeyCache {
  let c = caches.get(owner)
  if (!c) caches.set(owner, (c = new KeyCache()))
  return c
}
