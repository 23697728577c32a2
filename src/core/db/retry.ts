import type { Db, Tx } from './client.js'
import { isTransientConflict } from './errors.js'

/** Tries of a unit of work PostgreSQL aborted for a deadlock or a serialization failure. */
const CONFLICT_ATTEMPTS = 4
/** Up to this many milliseconds times the attempt before the next: the two sides should not meet in step again. */
const JITTER_MS = 25

/**
 * Runs `work` again when PostgreSQL aborted it to break a deadlock (40P01) or for a serialization failure
 * (40001), up to CONFLICT_ATTEMPTS times in all: concurrent requests that write the same contacts in another
 * order (two bulk imports of overlapping addresses) deadlock now and then, and the one PostgreSQL picks lost
 * its whole transaction, which was a 500. Only for work that touches nothing but the database and keeps no
 * state outside itself: an aborted try wrote nothing, so trying again is safe.
 */
export async function retryOnConflict<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (err) {
      if (!isTransientConflict(err) || attempt >= CONFLICT_ATTEMPTS) throw err
      await new Promise((resolve) => setTimeout(resolve, Math.random() * JITTER_MS * attempt))
    }
  }
}

/** `db.transaction(work)`, tried again as retryOnConflict says (the same conditions on `work`). */
export function retriedTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  return retryOnConflict(() => db.transaction(work))
}
