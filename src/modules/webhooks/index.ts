export {
  enqueueWebhookEvents,
  messageEvent,
  webhookOutboxFromSql,
  webhookOutboxSql,
} from './webhook-events.js'
export { runWebhookDeliveries } from './webhook-runner.js'
export { deliveryHeaders } from './webhook-signature.js'
export { accountsWithWebhook, findWebhook } from './webhooks.repo.js'
export { accountWebhooks, webhookBatches, webhookOutbox } from './webhooks.table.js'
