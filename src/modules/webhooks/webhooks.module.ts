import type { ModuleDef } from '../registry.js'
import { startWebhookDeliverer } from './webhook-runner.js'
import { webhookRoutes } from './webhooks.routes.js'

/** The account webhook: settings routes, and the loop that delivers queued events (contract §9). */
export const webhooksModule: ModuleDef = {
  name: 'webhooks',
  apiRoutes: webhookRoutes,
  async startWorker(ctx) {
    startWebhookDeliverer(ctx)
  },
}
