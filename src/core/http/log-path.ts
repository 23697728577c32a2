/**
 * Paths whose segment after the prefix is a capability token: whoever holds the URL can confirm a
 * subscription, unsubscribe, read a personal web version, or count an open or click in someone's name. Logs
 * are read by more people than those, and kept longer.
 */
const TOKEN_PATH = /^(\/(?:confirm|u|archive|w|t\/[oc])\/)([^/?#]+)/
/** Enough of a token to match a log line to a complaint, far too little to use it. */
const KEPT = 6

/** The request path as it may be logged: a capability token cut to its first characters. */
export function loggablePath(url: string): string {
  return url.replace(TOKEN_PATH, (_whole, prefix: string, token: string) =>
    token.length <= KEPT ? `${prefix}${token}` : `${prefix}${token.slice(0, KEPT)}…`,
  )
}
