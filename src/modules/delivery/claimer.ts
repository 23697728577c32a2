import { randomInt } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import type { DbHandle, SessionLock } from '../../core/db/client.js'

/**
 * The space of the session advisory locks that mark living senders (PostgreSQL's two-key form: this number, then
 * the sender's). Negative: other two-key locks of the app put an id (always positive) first, and must never meet
 * a sender's. The ledger's claim of expired rows reads pg_locks for it (ledger.repo.ts, claimExpired).
 */
export const CLAIMER_LOCK_SPACE = -7_200_342
/** Tries at a free number before claiming by the lease alone (two senders drawing one of 2^31 numbers is rare). */
const TRIES = 3
/**
 * Tries at the number held last, SAME_AGAIN_MS apart, before drawing another: the session that held it may still
 * be on its way out (a terminated backend frees its locks last).
 */
const SAME_AGAIN = 5
const SAME_AGAIN_MS = 100
/** After a failed try, how long claims go by the lease alone before the next. */
const RETRY_MS = 5_000
/**
 * How long a claim waits for a try under way (a sender's first, or the retake of a lost lock), so that its batch
 * carries a number too, while a database that does not answer holds up claims no longer than this, once.
 */
const TRY_WAIT_MS = 2_000

export interface Claimer {
  /** The number to write in `claimed_by`, or null to claim by the lease alone. */
  current(): Promise<number | null>
  /** Side effect: frees the lock; the rows still claimed under it are free at once. */
  release(): Promise<void>
}

/**
 * Marks this sender as alive while it is, so that the rows it claims are freed the moment it dies instead of
 * when their lease runs out: a random number held as a session lock. A killed process's connection closes
 * with it and PostgreSQL frees the lock; on PGlite the lock goes with the process that owns the database, so
 * after a restart the previous process's rows are free at once. Should the lock be lost while the process lives
 * (its connection cut, PostgreSQL restarted), the same number is taken again as soon as it is free: the rows
 * claimed under it are this sender's again, but those another sender took in between may go twice (at most the
 * batches in hand, as after a crash).
 */
export function startClaimer(
  handle: DbHandle,
  opts: {
    enabled: boolean
    onError: (err: unknown) => void
    onPooled: () => void
    /** The lock went while the sender lives (it is being taken again). */
    onLost: () => void
  },
): Claimer {
  let held: { id: number; lock: SessionLock } | undefined
  let lastId: number | undefined
  let pending: Promise<number | null> | undefined
  // A monotonic clock, not the app's: this paces tries at a real database, it is no wait of the domain.
  let triedAt = -Infinity
  /** Claims wait for the try under way (TRY_WAIT_MS) until it ends or one of them has waited in vain. */
  let waitForTry = true
  /** Off for good: turned off, released, or behind a pooler that cannot keep a session's lock. */
  let off = !opts.enabled

  function pooled() {
    off = true
    opts.onPooled()
  }

  function startTry() {
    pending ??= acquire().finally(() => (pending = undefined))
  }

  /** Side effect, once per lock (`held` tells whether it was handled): the lock went, take its number again. */
  function lostLock(lock: SessionLock) {
    if (held?.lock !== lock) return
    held = undefined
    if (off) return
    if (lock.pooled) {
      pooled()
      return
    }
    waitForTry = true
    startTry()
    opts.onLost()
  }

  /** Takes the number held last if there was one and it is free, else a random one. */
  async function acquire(): Promise<number | null> {
    triedAt = performance.now()
    try {
      for (let i = 0; i < SAME_AGAIN + TRIES && !off; i++) {
        const same = i < SAME_AGAIN ? lastId : undefined
        const id = same ?? randomInt(1, 2 ** 31 - 1)
        const lock = await handle.sessionLock(CLAIMER_LOCK_SPACE, id)
        if (lock === 'taken') {
          if (same !== undefined) await new Promise((r) => setTimeout(r, SAME_AGAIN_MS))
          continue
        }
        if (lock === 'pooled') {
          pooled()
          return null
        }
        if (off) {
          await lock.release()
          return null
        }
        held = { id, lock }
        lastId = id
        void lock.closed.then(() => lostLock(lock))
        return id
      }
    } catch (err) {
      opts.onError(err)
    } finally {
      waitForTry = false
    }
    return null
  }

  /** The try under way, waited for at most TRY_WAIT_MS; waited for in vain, the next claims do not wait. */
  function waitedFor(attempt: Promise<number | null>): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(() => {
        waitForTry = false
        resolve(null)
      }, TRY_WAIT_MS)
    })
    return Promise.race([attempt, late]).finally(() => clearTimeout(timer))
  }

  return {
    current() {
      if (held && !held.lock.lost) return Promise.resolve(held.id)
      // Lost, and its `closed` not yet seen: handled here, once, as it would be there.
      if (held) lostLock(held.lock)
      if (!off && !pending && performance.now() - triedAt >= RETRY_MS) startTry()
      // Lanes ask side by side: one try serves them all.
      return pending && waitForTry ? waitedFor(pending) : Promise.resolve(null)
    },
    async release() {
      off = true
      // A try under way gives up at its next step (`off`); its connection has time-outs of its own (client.ts).
      await pending
      const lock = held?.lock
      held = undefined
      await lock?.release()
    },
  }
}
