import type { AppContext } from '../../core/context.js'
import { createWebhookDeliverer, type RoundReport, type WebhookDeliverer } from './webhook-delivery.js'

/** The deliverer the worker of each context runs, so a one-off round goes through it. */
const running = new WeakMap<AppContext, WebhookDeliverer>()

/**
 * Runs one delivery round now and waits for its answers (tests, and anything that wants events out at once):
 * through the process's running deliverer when the worker runs, else through a one-off one.
 */
export async function runWebhookDeliveries(ctx: AppContext): Promise<RoundReport> {
  return (running.get(ctx) ?? createWebhookDeliverer(ctx)).runOnce()
}

/** Starts the loop that delivers queued events (the worker role), stopped when the context closes. */
export function startWebhookDeliverer(ctx: AppContext): void {
  const deliverer = createWebhookDeliverer(ctx)
  running.set(ctx, deliverer)
  deliverer.start()
  ctx.onClose(async () => {
    running.delete(ctx)
    await deliverer.stop()
  })
}
