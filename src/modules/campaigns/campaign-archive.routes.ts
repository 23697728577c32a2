import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { MessageError } from '../../core/http/schemas.js'
import { createCampaignArchiveService } from './campaign-archive.service.js'

// No length or pattern on the token: a malformed one must answer the same 404 as a forged one, never a 422.
const params = Type.Object({ token: Type.String() })
// The campaign's own HTML runs on our origin: a sandbox (no scripts, forms or same-origin access) keeps a
// hostile campaign from acting there, while its links, images and styles still work (as the tracking web version).
const ARCHIVE_CSP =
  "sandbox allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation; default-src 'none'; img-src * data:; style-src * 'unsafe-inline'; font-src * data:"

/** archive_url: the campaign's web version, public (no key); the signed token decides. */
export function campaignArchiveRoutes(app: ApiApp, ctx: AppContext): void {
  const archive = createCampaignArchiveService(ctx)
  app.get(
    '/archive/:token',
    {
      schema: {
        tags: ['Pages'],
        summary: 'Web version of a campaign (its archive_url)',
        security: [],
        params,
        response: {
          200: { description: 'The campaign as HTML', content: { 'text/html': { schema: Type.String() } } },
          404: MessageError,
        },
      },
    },
    async (req, reply) => {
      const html = await archive.page(req.params.token)
      return reply
        .header('content-security-policy', ARCHIVE_CSP)
        .header('referrer-policy', 'no-referrer')
        .header('x-content-type-options', 'nosniff')
        .type('text/html; charset=utf-8')
        .send(html)
    },
  )
}
