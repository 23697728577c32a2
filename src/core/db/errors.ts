/** PostgreSQL error codes the services translate into wire errors. */
export function isUniqueViolation(err: unknown): boolean {
  return pgCode(err) === '23505'
}

/**
 * A row the statement refers to is not there (23503): in a request, a record it named was deleted by another
 * one between the request's check and its write (a subscribe to a list being deleted, seen under load).
 */
export function isForeignKeyViolation(err: unknown): boolean {
  return pgCode(err) === '23503'
}

/**
 * PostgreSQL aborted the transaction to resolve a conflict with a concurrent one: a deadlock (40P01) or a
 * serialization failure (40001). Nothing of it was written; the same work may succeed when run again.
 */
export function isTransientConflict(err: unknown): boolean {
  const code = pgCode(err)
  return code === '40P01' || code === '40001'
}

/**
 * The database could not be reached or ended the session: a connection exception (class 08), a shutdown or
 * pg_terminate_backend (57P01–57P03), too many connections (53300), a socket error, or the driver's own word
 * for a connection it lost. Whether the work committed is unknown, but the same work may succeed later, so a
 * loop that meets it waits and tries again rather than giving up on what it was doing.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const code = pgCode(err)
  if (code !== undefined) return UNAVAILABLE_CODES.test(code) || SOCKET_ERRORS.has(code)
  for (let e: unknown = err, i = 0; i < 3 && e instanceof Error; i++, e = e.cause)
    if (LOST_CONNECTION.test(e.message)) return true
  return false
}

/**
 * What a loop that runs again anyway (the sender, a campaign's freeze) waits out instead of giving up on its
 * work: an unavailable database or a conflict PostgreSQL aborted.
 */
export function isTransientDatabaseError(err: unknown): boolean {
  return isDatabaseUnavailable(err) || isTransientConflict(err)
}

const UNAVAILABLE_CODES = /^(?:08[0-9A-Z]{3}|57P0[123]|53300)$/
const SOCKET_ERRORS = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTCONN',
])
/** node-postgres's words, on errors without a code, for a connection it lost or could not get. */
const LOST_CONNECTION = /Connection terminated|not queryable|timeout exceeded when trying to connect/i

/**
 * The server refused the statement itself for what it carried (bad data, a constraint, a limit): nothing of it
 * was written, and the same statement without the offending rows may succeed. Not a lost connection, a
 * shutdown or a timeout, after which whether a commit happened is unknown.
 */
export function isRefusedStatement(err: unknown): boolean {
  const code = pgCode(err)
  return code !== undefined && /^(22|23|54)/.test(code)
}

/**
 * The table a foreign-key violation found its row missing from, read from the server's detail (`Key
 * (list_id)=(7) is not present in table "lists".`, the same text from PostgreSQL and PGlite), so the answer can
 * name what is gone. Undefined for any other error, or a detail in another shape (a server speaking another
 * language).
 */
export function missingReferenceTable(err: unknown): string | undefined {
  if (!isForeignKeyViolation(err)) return undefined
  const detail = driverError(err)?.detail
  if (typeof detail !== 'string') return undefined
  return /is not present in table "([a-z_]+)"/.exec(detail)?.[1]
}

function pgCode(err: unknown): string | undefined {
  const code = driverError(err)?.code
  return typeof code === 'string' ? code : undefined
}

/** The driver's own error: drizzle wraps it in `cause`. */
function driverError(err: unknown): { code?: unknown; detail?: unknown } | undefined {
  let e: unknown = err
  for (let i = 0; i < 3 && e && typeof e === 'object'; i++) {
    if (typeof (e as { code?: unknown }).code === 'string') return e as { code: string; detail?: unknown }
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}
