import type { SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import type { EventType, NewEvent } from '../events/index.js'
import { insertOutboxEvents, outboxInsertSql, type OutboxEvent } from './webhooks.repo.js'

export { outboxInsertFromSql as webhookOutboxFromSql } from './webhooks.repo.js'

/** The webhook `type` of each event we record (contract §9), with SparkPost's bounce class where it has one. */
const TYPES: Record<EventType, { type: string; bounceClass?: string }> = {
  send: { type: 'delivery' },
  open: { type: 'open' },
  click: { type: 'click' },
  // SparkPost's classes: 10 invalid recipient (hard), 20 soft bounce (undetermined soft), 1 undetermined.
  hard_bounce: { type: 'bounce', bounceClass: '10' },
  soft_bounce: { type: 'bounce', bounceClass: '20' },
  out_of_band: { type: 'bounce', bounceClass: '1' },
  unsub: { type: 'list_unsubscribe' },
  spam: { type: 'spam_complaint' },
  spam_complaint: { type: 'spam_complaint' },
}

const idText = (n: number | null | undefined) => (n ? String(n) : null)

/**
 * The `message_event` object of one event, as far as the event itself tells it; SQL adds `event_id`,
 * `subject`, `transmission_id` and `rcpt_meta.subaccount`. Values are strings, as in the Ecomail and
 * SparkPost payloads receivers already parse.
 */
export function messageEvent(e: NewEvent): Record<string, unknown> {
  const kind = TYPES[e.event]
  const campaignId = idText(e.campaignId)
  const out: Record<string, unknown> = {
    type: kind.type,
    timestamp: String(Math.floor(e.occurredAt.getTime() / 1000)),
    message_id: e.messageId ? String(e.messageId) : '',
    rcpt_to: e.email,
    raw_rcpt_to: e.email,
    recipient_domain: e.email.slice(e.email.lastIndexOf('@') + 1),
    campaign_id: campaignId,
    rcpt_meta: {
      campaign_id: campaignId,
      pipeline_id: idText(e.pipelineId),
      pipeline_action_id: e.actionId ?? null,
    },
  }
  if (kind.bounceClass) {
    out.bounce_class = kind.bounceClass
    out.reason = e.msg ?? ''
    out.raw_reason = e.msg ?? ''
  }
  if (e.event === 'click') out.target_link_url = e.url ?? ''
  if (kind.type === 'spam_complaint') out.fbtype = e.msg ?? 'abuse'
  return out
}

/**
 * Queues these events for delivery to their accounts' webhooks, in the caller's transaction (so an event is
 * delivered exactly when its cause commits). One statement, which writes nothing for accounts without one.
 */
export async function enqueueWebhookEvents(ex: Executor, rows: readonly NewEvent[]): Promise<void> {
  if (rows.length > 0) await insertOutboxEvents(ex, rows.map(outboxEvent))
}

/** enqueueWebhookEvents as SQL, for a caller that folds it into its own statement (a CTE). */
export function webhookOutboxSql(rows: readonly NewEvent[], onlyIf?: SQL): SQL {
  return outboxInsertSql(rows.map(outboxEvent), onlyIf)
}

const outboxEvent = (e: NewEvent): OutboxEvent => ({
  accountId: e.accountId,
  messageId: e.messageId ?? null,
  payload: messageEvent(e),
})
