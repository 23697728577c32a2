import type { FastifyReply } from 'fastify'

// The mail's own HTML runs on our origin: a sandbox (no scripts, forms or same-origin access) keeps a hostile
// message from acting there, while its links, images and styles still work.
const WEB_VERSION_CSP =
  "sandbox allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation; default-src 'none'; img-src * data:; style-src * 'unsafe-inline'; font-src * data:"

/** Tokens sit in these URLs: keep them out of caches and out of the Referer of whatever comes next. */
export function noStore(reply: FastifyReply): FastifyReply {
  return reply
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
}

/** A mail's own HTML as a page: sandboxed, uncached, no Referer (web versions and campaign archives). */
export function sendMailHtml(reply: FastifyReply, html: string): FastifyReply {
  return noStore(reply)
    .header('content-security-policy', WEB_VERSION_CSP)
    .type('text/html; charset=utf-8')
    .send(html)
}
