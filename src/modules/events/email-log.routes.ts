import type { FastifyRequest } from 'fastify'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors } from '../../core/http/schemas.js'
import { EmailLogPage, EmailLogParams, EmailLogQuery } from './email-log.schemas.js'
import { createEmailLogService } from './email-log.service.js'

const EVENTS_KEY = /^events(?:\[\d*\])?$/

/**
 * Fastify's query parser keeps bracketed names as they are: `events[]=open&events[]=click` arrives as
 * `{"events[]": [...]}`, PHP's http_build_query sends `events[0]=open`, and a hand-written URL `events=open`.
 * All of them become one `events` array before validation (which turns a single value into an array).
 */
async function foldEventFilter(req: FastifyRequest): Promise<void> {
  const query = req.query as Record<string, unknown>
  const values: unknown[] = []
  for (const key of Object.keys(query)) {
    if (!EVENTS_KEY.test(key)) continue
    const v = query[key]
    values.push(...(Array.isArray(v) ? v : [v]))
    delete query[key]
  }
  if (values.length > 0) query.events = values
}

export function emailLogRoutes(app: ApiApp, ctx: AppContext): void {
  const log = createEmailLogService(ctx)
  app.get(
    '/subscribers/:email/email-log',
    {
      schema: {
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
