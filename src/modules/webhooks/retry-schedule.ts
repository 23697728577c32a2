/** When a failed webhook batch is tried again (contract §9: backoff for 24 h). */

export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000
const BASE_MS = 30_000
const CAP_MS = 60 * 60 * 1000

/**
 * Exponential backoff with jitter after the `attempts`-th failed try: 30 s, 1 min, 2 min … up to 1 h, each
 * scaled by a random factor in [0.5, 1) so receivers that failed together do not get retried together.
 */
export function backoffMs(attempts: number, random: () => number): number {
  const exp = Math.min(CAP_MS, BASE_MS * 2 ** Math.max(0, Math.min(attempts - 1, 20)))
  return Math.round(exp * (0.5 + random() / 2))
}

/** A `Retry-After` header in ms from `now`: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now: Date): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim()
  if (!value) return undefined
  if (/^\d+$/.test(value)) return Number(value) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime())
}

/**
 * The next try after a failure, or undefined when the 24 h window is over. The receiver's `Retry-After` is
 * honoured (never earlier than it asks), and the last try falls on the end of the window rather than past it.
 */
export function nextAttemptAt(opts: {
  now: Date
  createdAt: Date
  attempts: number
  retryAfterMs: number | undefined
  random: () => number
}): Date | undefined {
  const deadline = opts.createdAt.getTime() + RETRY_WINDOW_MS
  const now = opts.now.getTime()
  if (now >= deadline) return undefined
  const wait = Math.max(backoffMs(opts.attempts, opts.random), opts.retryAfterMs ?? 0)
  return new Date(Math.min(now + wait, deadline))
}
