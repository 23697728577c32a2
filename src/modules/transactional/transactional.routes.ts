import type { FastifyRequest } from 'fastify'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, ErrorString } from '../../core/http/schemas.js'
import {
  NULLABLE_COLLECTIONS,
  SendMessageBody,
  SendResults,
  SendTemplateBody,
} from './transactional.schemas.js'
import { createTransactionalService, requirePlan } from './transactional.service.js'
import { transactionalStatsRoutes } from './transactional-stats.routes.js'
import { MAX_MESSAGE_BYTES } from './transactional.validate.js'

const tags = ['Transactional emails']
const responses = { 200: SendResults, 403: ErrorString, ...commonErrors }
/**
 * A message may carry up to 4 MB of attachments, which base64 and JSON make about 5.6 MB on the wire; the
 * 422 for an oversized message must come from the size rule, not a 413, even where BODY_LIMIT_BYTES is lower.
 */
const MIN_BODY_LIMIT = 2 * MAX_MESSAGE_BYTES

/**
 * Contract §1/§2: the plan decides before the body does, so a free account hears 403 for any body, as it
 * would from a plan check in front of the controller, rather than 422 for a body it may never send.
 */
async function planFirst(req: FastifyRequest): Promise<void> {
  requirePlan(req.account)
}

/**
 * A null optional collection counts as absent (see NULLABLE_COLLECTIONS), and so do empty `options` sent as `[]`:
 * PHP's json_encode writes an empty map so (EmptyArray), and a PHP caller's `'options' => []` must not be a 422.
 */
async function dropNullCollections(req: { body: unknown }): Promise<void> {
  const message = (req.body as { message?: unknown } | null | undefined)?.message
  if (message === null || typeof message !== 'object') return
  const fields = message as Record<string, unknown>
  for (const k of NULLABLE_COLLECTIONS) if (fields[k] === null) delete fields[k]
  if (Array.isArray(fields.options) && fields.options.length === 0) delete fields.options
}

export function transactionalRoutes(app: ApiApp, ctx: AppContext): void {
  const service = createTransactionalService(ctx)
  const bodyLimit = Math.max(ctx.config.bodyLimitBytes, MIN_BODY_LIMIT)
  transactionalStatsRoutes(app, ctx)

  app.post(
    '/transactional/send-message',
    {
      bodyLimit,
      preValidation: [planFirst, dropNullCollections],
      schema: {
        operationId: 'sendTransactionalMessage',
        tags,
        summary: 'Send a transactional email with custom content',
        body: SendMessageBody,
        response: responses,
      },
    },
    async (req) => service.sendMessage(req.account, req.body.message),
  )
  app.post(
    '/transactional/send-template',
    {
      bodyLimit,
      preValidation: [planFirst, dropNullCollections],
      schema: {
        operationId: 'sendTransactionalTemplate',
        tags,
        summary: 'Send a transactional email from a template',
        body: SendTemplateBody,
        response: responses,
      },
    },
    async (req) => service.sendTemplate(req.account, req.body.message),
  )
}
