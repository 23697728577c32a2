/**
 * Paths whose segment after the prefix is a capability token: whoever holds the URL can confirm a
 * subscription, unsubscribe, read a personal web version, or count an open or click in someone's name. Logs
 * are read by more people than those, and kept longer.
 */
const TOKEN_PATH = /^(\/(?:confirm|u|archive|w|t\/[oc])\/)([^/?#]+)/
/** Enough of a token to match a log line to a complaint, far too little to use it. */
const KEPT = 6

/**
 * The request path as it may be logged: a capability token cut to its first characters. Runs of slashes are one
 * first, as the router reads them (`//t/o/<token>` opens the pixel too).
 */
export function loggablePath(url: string): string {
  const query = url.indexOf('?')
  const path = (query < 0 ? url : url.slice(0, query)).replace(/\/{2,}/g, '/')
  return (path + (query < 0 ? '' : url.slice(query))).replace(
    TOKEN_PATH,
    (_whole, prefix: string, token: string) =>
      token.length <= KEPT ? `${prefix}${token}` : `${prefix}${token.slice(0, KEPT)}…`,
  )
}
