import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors } from '../../core/http/schemas.js'
import { SetWebhookBody, Success, WebhookSettings } from './webhooks.schemas.js'
import { createWebhookService } from './webhooks.service.js'

const tags = ['Webhooks']
const path = '/account/settings/webhook'

export function webhookRoutes(app: ApiApp, ctx: AppContext): void {
  const webhooks = createWebhookService(ctx)
  app.post(
    path,
    {
      schema: {
        operationId: 'setWebhook',
        tags,
        summary: 'Set the account webhook URL',
        description:
          'Events (delivery, bounce, open, click, spam_complaint, list_unsubscribe) are POSTed to it in ' +
          'batches, signed with Standard Webhooks headers; failures are retried with backoff for 24 h.',
        body: SetWebhookBody,
        response: { 200: Success, ...commonErrors },
      },
    },
    async (req) => webhooks.set(req.account.id, req.body.url),
  )
  app.get(
    path,
    {
      schema: {
        operationId: 'getWebhook',
        tags,
        summary: 'The account webhook URL and its signing secret',
        response: { 200: WebhookSettings, ...commonErrors },
      },
    },
    async (req) => webhooks.get(req.account.id),
  )
  app.delete(
    path,
    {
      schema: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Remove the account webhook',
        response: { 200: Success, ...commonErrors },
      },
    },
    async (req) => webhooks.remove(req.account.id),
  )
}
