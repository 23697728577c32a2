import type { AppContext } from '../../core/context.js'
import type { ModuleDef } from '../registry.js'
import { createWebhookDeliverer, type RoundReport, type WebhookDeliverer } from './webhook-delivery.js'
import { webhookRoutes } from './webhooks.routes.js'

export {
  enqueueWebhookEvents,
  messageEvent,
  webhookOutboxFromSql,
  webhookOutboxSql,
} from './webhook-events.js'
export { deliveryHeaders } from './webhook-signature.js'
export { findWebhook } from './webhooks.repo.js'
export { accountWebhooks, webhookBatches, webhookOutbox } from './webhooks.table.js'

const running = new WeakMap<AppContext, WebhookDeliverer>()

/**
 * Runs one delivery round now and waits for its answers (tests, and anything that wants events out at once):
 * through the process's running deliverer when the worker runs, else through a one-off one.
 */
export async function runWebhookDeliveries(ctx: AppContext): Promise<RoundReport> {
  return (running.get(ctx) ?? createWebhookDeliverer(ctx)).runOnce()
}

/** The account webhook: settings routes, and the loop that delivers queued events (contract §9). */
export const webhooksModule: ModuleDef = {
  name: 'webhooks',
  apiRoutes: webhookRoutes,
  async startWorker(ctx) {
    const deliverer = createWebhookDeliverer(ctx)
    running.set(ctx, deliverer)
    deliverer.start()
    ctx.onClose(async () => {
      running.delete(ctx)
      await deliverer.stop()
    })
  },
}
