import { randomInt } from 'node:crypto'
import type { DbHandle, SessionLock } from '../../core/db/client.js'

/**
 * The space of the session advisory locks that mark living senders (PostgreSQL's two-key form: this number, then
 * the sender's). Negative: other two-key locks of the app put an id (always positive) first, and must never meet
 * a sender's. The ledger's claim of expired rows reads pg_locks for it (ledger.repo.ts, claimExpired).
 */
export const CLAIMER_LOCK_SPACE = -7_200_342
/** Tries at a free number before claiming by the lease alone (two senders drawing one of 2^31 numbers is rare). */
const TRIES = 3
/** Tries at the number held last, SAME_AGAIN_MS apart, before drawing another. */
const SAME_AGAIN = 5
const SAME_AGAIN_MS = 100
/** After a failed or lost lock, how long claims go by the lease alone before the next try. */
const RETRY_MS = 5_000
/**
 * How long a sender's first claim waits for its first lock: its first batch is then marked too, while a
 * database that does not answer holds up no claim for longer (later tries are not waited for at all).
 */
const FIRST_WAIT_MS = 2_000

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
 * after a restart the previous process's rows are free at once. Should the lock's connection be lost while the
 * process lives (PostgreSQL restarted), the rows it claimed may be claimed again by another sender (at most the
 * batches in hand sent twice, as after a crash) and a new number is drawn.
 */
export function startClaimer(
  handle: DbHandle,
  opts: {
    enabled: boolean
    onError: (err: unknown) => void
    onPooled: () => void
    /** The lock went while the sender lives (a new one is being taken). */
    onLost: () => void
  },
): Claimer {
  let held: { id: number; lock: SessionLock } | undefined
  let lastId: number | undefined
  let pending: Promise<number | null> | undefined
  // Wall time, not the app clock: this paces tries at a real database, it is not a wait of the domain.
  let triedAt = -Infinity
  let tried = false
  /** Off for good: turned off, released, or behind a pooler that cannot keep a session's lock. */
  let off = !opts.enabled

  function pooled() {
    off = true
    opts.onPooled()
  }

  /**
   * When the lock goes while the sender lives (PostgreSQL restarted, the connection cut), the same number is
   * taken again at once: the rows claimed under it are this sender's again, unless another sender took them in
   * between (then they may go twice, as after a crash).
   */
  function watch(lock: SessionLock) {
    void lock.closed.then(() => {
      if (off || held?.lock !== lock || lock.pooled) return
      held = undefined
      // Claims wait for it as for the first (FIRST_WAIT_MS): a batch claimed meanwhile would carry no number.
      tried = false
      pending ??= acquire().finally(() => (pending = undefined))
      opts.onLost()
    })
  }

  /**
   * Takes the number held last if there was one and it is free (its rows stay this sender's, also when the
   * database was away for a while), else a random one.
   */
  async function acquire(): Promise<number | null> {
    triedAt = Date.now()
    try {
      for (let i = 0; i < TRIES + SAME_AGAIN; i++) {
        const same = lastId !== undefined && i < SAME_AGAIN
        const id = same ? lastId! : randomInt(1, 2 ** 31 - 1)
        const lock = await handle.sessionLock(CLAIMER_LOCK_SPACE, id)
        if (lock === 'taken') {
          // The session that held it may still be on its way out (a terminated backend frees its locks last).
          if (same) await new Promise((r) => setTimeout(r, SAME_AGAIN_MS))
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
        watch(lock)
        return id
      }
    } catch (err) {
      opts.onError(err)
    } finally {
      tried = true
    }
    return null
  }

  /** The first try, waited for at most FIRST_WAIT_MS. */
  function firstTry(attempt: Promise<number | null>): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), FIRST_WAIT_MS)))
    return Promise.race([attempt, late]).finally(() => clearTimeout(timer))
  }

  return {
    current() {
      if (held && !held.lock.lost) return Promise.resolve(held.id)
      if (held?.lock.pooled) pooled()
      held = undefined
      if (!off && !pending && Date.now() - triedAt >= RETRY_MS)
        pending = acquire().finally(() => (pending = undefined))
      // Lanes ask side by side: one try serves them all; once a first try has ended, none is waited for.
      return pending && !tried ? firstTry(pending) : Promise.resolve(null)
    },
    async release() {
      off = true
      await pending
      const lock = held?.lock
      held = undefined
      await lock?.release()
    },
  }
}
