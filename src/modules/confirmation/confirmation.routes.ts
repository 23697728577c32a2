import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { MessageError } from '../../core/http/schemas.js'
import { createConfirmationService } from './confirmation.service.js'
import { CONFIRMED_PAGE_HTML } from './confirmed-page.js'

/** Public pages linked from confirmation mail; no API key, the signed token is the credential. */
export function confirmationRoutes(app: ApiApp, ctx: AppContext): void {
  const confirmation = createConfirmationService(ctx)

  app.get(
    '/confirm/:token',
    {
      schema: {
        operationId: 'confirmSubscription',
        tags: ['Pages'],
        summary: 'Confirm a subscription (the *|CONFIRM|* link of a double opt-in mail)',
        security: [],
        // No length or pattern here: a bad token must answer the same 404 as a forged one, never a 422.
        params: Type.Object({ token: Type.String() }),
        response: {
          200: {
            description: 'Confirmation page, when the list has no sub_confirmed_page',
            content: { 'text/html': { schema: Type.String() } },
          },
          302: { description: "Redirect to the list's sub_confirmed_page", type: 'null' },
          404: MessageError,
        },
      },
    },
    async (req, reply) => {
      const { redirectTo } = await confirmation.confirm(req.params.token)
      // The token is in this URL; keep it out of caches and out of the Referer of anything the page loads.
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer')
      if (redirectTo) return reply.redirect(redirectTo, 302)
      return reply.code(200).type('text/html; charset=utf-8').send(CONFIRMED_PAGE_HTML)
    },
  )
}
