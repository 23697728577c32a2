import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { MessageError } from '../../core/http/schemas.js'
import { sendMailHtml } from '../tracking/index.js'
import { createCampaignArchiveService } from './campaign-archive.service.js'

// No length or pattern on the token: a malformed one must answer the same 404 as a forged one, never a 422.
const params = Type.Object({ token: Type.String() })
/** archive_url: the campaign's web version, public (no key); the signed token decides. */
export function campaignArchiveRoutes(app: ApiApp, ctx: AppContext): void {
  const archive = createCampaignArchiveService(ctx)
  app.get(
    '/archive/:token',
    {
      schema: {
        operationId: 'getCampaignArchive',
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
    async (req, reply) => sendMailHtml(reply, await archive.page(req.params.token)),
  )
}
