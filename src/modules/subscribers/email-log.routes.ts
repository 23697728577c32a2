import type { FastifyRequest } from 'fastify'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors } from '../../core/http/schemas.js'
import { EmailLogQuery, foldEventsQuery } from '../events/index.js'
import { EmailLogPage, EmailLogParams } from './email-log.schemas.js'
import { createEmailLogService } from './email-log.service.js'

/** `events[]`, `events[0]` and `events` all become one `events` array before validation (foldEventsQuery). */
async function foldEventFilter(req: FastifyRequest): Promise<void> {
  foldEventsQuery(req.query as Record<string, unknown>)
}

export function emailLogRoutes(app: ApiApp, ctx: AppContext): void {
  const log = createEmailLogService(ctx)
  app.get(
    '/subscribers/:email/email-log',
    {
      schema: {
        operationId: 'getSubscriberEmailLog',
        tags: ['Subscribers'],
        summary: 'Mail events of one address, newest first',
        description: 'An address that is neither a contact nor in any event of the account answers 404.',
        params: EmailLogParams,
        querystring: EmailLogQuery,
        response: { 200: EmailLogPage, ...commonErrors },
      },
      preValidation: foldEventFilter,
    },
    async (req) => log.page(req.account.id, req.params.email, req.query),
  )
}
