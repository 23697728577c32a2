import type { Logger } from 'pino'
import { isTransientDatabaseError } from './db/errors.js'

/**
 * Logs a worker loop's round that threw. The loop runs its next round anyway, so a database that was away (a
 * restart, a failover, a cut connection) or a conflict it aborted is a warning: it mends itself, and at error
 * level every failover paged whoever watches the log, once per loop and round. Anything else is an error.
 */
export function logRoundFailure(
  log: Pick<Logger, 'warn' | 'error'>,
  err: unknown,
  what: string,
  fields: Record<string, unknown> = {},
): void {
  if (isTransientDatabaseError(err))
    log.warn({ err, ...fields }, `${what}: the database was unavailable; the next round tries again`)
  else log.error({ err, ...fields }, what)
}
