import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { MessageError } from '../../core/http/schemas.js'
import { TRANSPARENT_GIF, UNSUBSCRIBED_PAGE_HTML, unsubscribeFormPage } from './tracking.pages.js'
import { noStore, sendMailHtml } from './tracking.replies.js'
import { createTrackingService } from './tracking.service.js'
import type { MessageSources } from './tracking.sources.js'

const tags = ['Pages']
// No length or pattern on the token: a malformed one must answer the same 404 as a forged one, never a 422.
const params = Type.Object({ token: Type.String() })
const html = (description: string) => ({
  description,
  content: { 'text/html': { schema: Type.String() } },
})
/** A one-click body is a few dozen bytes; nothing larger is read. */
const FORM_BODY_LIMIT = 16 * 1024
const ONE_CLICK_BODY = Type.Object(
  {
    'List-Unsubscribe': Type.Optional(Type.String({ maxLength: 100 })),
    from: Type.Optional(
      Type.String({ maxLength: 100, description: "`page`: the unsubscribe page's own button (a person)" }),
    ),
  },
  { description: 'RFC 8058: `List-Unsubscribe=One-Click`, or empty; the token alone decides' },
)
/**
 * The unsubscribe pages' policy. The page's form posts to this origin, which then sends the person on to the
 * list's unsub_page when it has one: browsers apply form-action to that redirect too, so its origin is allowed.
 */
const pageCsp = (next: string | null = null) =>
  `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${next ? ` ${new URL(next).origin}` : ''}; ` +
  "frame-ancestors 'none'"

/**
 * Fastify answers HEAD through the GET handlers. HEAD is safe (RFC 9110 §9.2.1) and comes from link scanners
 * and preview fetchers, not readers, so it checks the link without counting an open or click.
 */
const records = (req: FastifyRequest) => req.method !== 'HEAD'

/** Node refuses header values outside Latin-1; links in mail may hold raw UTF-8 or spaces. */
function locationHeader(url: string): string {
  return url.replace(/[^\x21-\x7e]+/g, (s) => {
    try {
      return encodeURI(s)
    } catch {
      return '' // a lone surrogate cannot be encoded, nor be part of a working URL
    }
  })
}

/** Open pixel, click redirect, unsubscribe page and one-click, web version: no key, the token decides. */
export function trackingRoutes(app: ApiApp, ctx: AppContext, sources: MessageSources): void {
  const tracking = createTrackingService(ctx, sources)

  // RFC 8058 allows either form encoding. These parsers live in this plugin's scope only; the API stays JSON.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  )
  // Its fields would change nothing, so they are read past, not parsed.
  app.addContentTypeParser(
    'multipart/form-data',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_req, _body, done) => done(null, {}),
  )

  app.get(
    '/t/o/:token',
    {
      schema: {
        operationId: 'trackOpen',
        tags,
        summary: 'Open-tracking pixel',
        security: [],
        params,
        response: {
          200: { description: '1×1 transparent GIF', content: { 'image/gif': { schema: Type.String() } } },
          404: MessageError,
        },
      },
    },
    async (req, reply) => {
      await tracking.open(req.params.token, records(req))
      return noStore(reply).type('image/gif').send(TRANSPARENT_GIF)
    },
  )

  app.get(
    '/t/c/:token',
    {
      schema: {
        operationId: 'trackClick',
        tags,
        summary:
          'Click tracking: redirects to the link stored for the message (query parameters are ignored)',
        security: [],
        params,
        response: { 302: { description: 'Redirect to the stored link', type: 'null' }, 404: MessageError },
      },
    },
    async (req, reply) =>
      noStore(reply).redirect(locationHeader(await tracking.click(req.params.token, records(req))), 302),
  )

  app.get(
    '/u/:token',
    {
      schema: {
        operationId: 'getUnsubscribePage',
        tags,
        summary: 'Unsubscribe page: names the address, unsubscribes only through its button',
        security: [],
        params,
        response: { 200: html('Page with a one-click form'), 404: MessageError },
      },
    },
    async (req, reply) => {
      const { email, page } = await tracking.unsubscribeTarget(req.params.token)
      return noStore(reply)
        .header('content-security-policy', pageCsp(page))
        .type('text/html; charset=utf-8')
        .send(unsubscribeFormPage(email))
    },
  )

  app.post(
    '/u/:token',
    {
      bodyLimit: FORM_BODY_LIMIT,
      schema: {
        operationId: 'unsubscribeOneClick',
        tags,
        summary:
          "One-click unsubscribe (RFC 8058); idempotent. Only the page's own button (`from=page`) is redirected " +
          "(303) to the list's `unsub_page`, when it has one",
        security: [],
        consumes: ['application/x-www-form-urlencoded', 'multipart/form-data'],
        params,
        body: ONE_CLICK_BODY,
        response: {
          200: html('Confirmation page'),
          303: { description: "After the page's button: to the list's unsub_page", type: 'null' },
          404: MessageError,
        },
      },
      // A POST without any body is a valid one-click too: give the validator the empty form it stands for.
      preValidation: async (req) => {
        req.body ??= {}
      },
    },
    async (req, reply) => {
      const { page } = await tracking.unsubscribe(req.params.token, req.body.from === 'page')
      if (page) return noStore(reply).redirect(locationHeader(page), 303)
      return noStore(reply)
        .header('content-security-policy', pageCsp())
        .type('text/html; charset=utf-8')
        .send(UNSUBSCRIBED_PAGE_HTML)
    },
  )

  app.get(
    '/w/:token',
    {
      schema: {
        operationId: 'getWebVersion',
        tags,
        summary: 'Web version of a message',
        security: [],
        params,
        response: { 200: html('The message as HTML'), 404: MessageError },
      },
    },
    async (req, reply) => sendMailHtml(reply, await tracking.webVersion(req.params.token)),
  )
}
