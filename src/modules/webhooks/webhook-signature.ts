import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'

/** A Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/**
 * The headers of one delivery: Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`,
 * HMAC-SHA256 over `id.timestamp.body`) and SparkPost's `X-MessageSystems-Batch-ID`, which Ecomail receivers
 * deduplicate on. Both ids are the batch id, the same on every retry.
 */
export function deliveryHeaders(id: string, secret: string, at: Date, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-messagesystems-batch-id': id,
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  }
}
