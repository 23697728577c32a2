/**
 * Paths whose segment after the prefix is a capability token: whoever holds the URL can confirm a
 * subscription, unsubscribe, read a personal web version, or count an open or click in someone's name. Logs
 * are read by more people than those, and kept longer.
 */
const TOKEN_PATH = /^(\/(?:confirm|u|archive|w|t\/[oc])\/)([^/?#]+)/
/** Enough of a token to match a log line to a complaint, far too little to use it. */
const KEPT = 6

/** Query parameters that carry an API key when a client puts it in the URL (refused, but logged). */
const KEY_PARAM = /([?&](?:key|api_key|apikey)(?:\[\])?=)[^&#]*/gi

/**
 * Percent-escapes of unreserved characters (letters, digits, `-._~`) decoded, as the router reads them: `/%75/` is
 * `/u/` there. Each escape on its own, so one malformed escape elsewhere in the URL does not leave the rest encoded
 * (decodeURI gave up on the whole path), and reserved ones (`%2F`) stay as they are.
 */
const decodedUnreserved = (text: string) =>
  text.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16))
    return /[A-Za-z0-9._~-]/.test(ch) ? ch : escape
  })

/**
 * The request path as it may be logged: a capability token cut to its first characters, and an API key given in
 * the query left out. Runs of slashes are one first, as the router reads them (`//t/o/<token>` opens the pixel
 * too), and percent-escapes decoded (`/%75/<token>` is the unsubscribe page).
 */
export function loggablePath(url: string): string {
  const query = url.indexOf('?')
  const path = decodedUnreserved(query < 0 ? url : url.slice(0, query)).replace(/\/{2,}/g, '/')
  const rest = query < 0 ? '' : decodedUnreserved(url.slice(query)).replace(KEY_PARAM, '$1…')
  return (path + rest).replace(TOKEN_PATH, (_whole, prefix: string, token: string) =>
    token.length <= KEPT ? `${prefix}${token}` : `${prefix}${token.slice(0, KEPT)}…`,
  )
}
