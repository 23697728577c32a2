import type { AppContext } from '../../core/context.js'
import { createBatcher } from '../../core/db/batcher.js'
import type { Executor } from '../../core/db/client.js'
import {
  findTrackedMessage,
  findTrackedMessages,
  reachMilestone,
  type TrackedMessage,
} from '../messages/index.js'
import { messageEvent } from '../webhooks/index.js'
import {
  applyComplaint,
  applyHardBounce,
  applySoftBounce,
  unsubscribeEverywhere,
} from '../subscribers/index.js'
import { addToCounters, type CounterScope, type Counters } from '../events/index.js'
import { insertEvent, recordHits, type Hit } from './outcomes.repo.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock'>

/**
 * A batch is whatever arrived while the previous ones were in the database; two in flight keep one being
 * written while the next gathers (more would only queue on the same counter rows).
 */
const HIT_BATCHES = { maxBatch: 200, maxInFlight: 2 }
type MessageRef = Omit<TrackedMessage, 'links' | 'kind'>

const about = (m: MessageRef) => ({
  accountId: m.accountId,
  messageId: m.id,
  campaignId: m.campaignId,
  pipelineId: m.pipelineId,
  actionId: m.actionId,
  contactId: m.contactId,
  email: m.email,
})

/** The counters a message's events go to: its campaign, or its automation mail node. */
const scopeOf = (m: Pick<MessageRef, 'campaignId' | 'pipelineId' | 'actionId'>): CounterScope => ({
  campaignId: m.campaignId,
  pipelineId: m.pipelineId,
  actionId: m.actionId,
})

const count = (
  ex: Executor,
  m: Pick<MessageRef, 'id' | 'campaignId' | 'pipelineId' | 'actionId'>,
  delta: Partial<Counters>,
) => addToCounters(ex, scopeOf(m), m.id, delta)

/**
 * Everything that comes back from mail lands here: each call writes its event and its consequences (first
 * open/click stamps, suppression, unsubscription, the statistics counters of contract §5) in one transaction,
 * so numbers and states never disagree. Unique counters rest on the milestone columns of the message row:
 * only the call that stamps one counts the message. The campaign sender writes its own `send` events and
 * `inject` counts in bulk; everything else is counted here.
 */
export function createEventRecorder(ctx: Ctx) {
  const now = () => ctx.clock.now()
  // Opens and clicks come by the thousand: concurrent ones share one lookup and one write (createBatcher).
  const trackedMessage = createBatcher((ids: number[]) => findTrackedMessages(ctx.dbHandle, ids), HIT_BATCHES)
  const recordHit = createBatcher((hits: Hit[]) => recordHits(ctx.dbHandle, hits), HIT_BATCHES)
  const hit = (message: TrackedMessage, event: 'open' | 'click', url: string | null) => {
    const e = { ...about(message), event, url, occurredAt: now() }
    return recordHit({
      messageId: message.id,
      event,
      url,
      occurredAt: e.occurredAt,
      payload: messageEvent(e),
    })
  }
  return {
    /** The relay accepted the message (transactional, automation and test sends; campaigns count in bulk). */
    async sent(ex: Executor, m: MessageRef): Promise<void> {
      await insertEvent(ex, { ...about(m), event: 'send', occurredAt: now() })
      await count(ex, m, { inject: 1 })
    },

    /**
     * False when the message does not exist. One lookup and one statement, each shared with other hits.
     * `record: false` only checks (a HEAD request: safe by RFC 9110, and sent by link scanners, not readers).
     */
    async opened(messageId: number, record = true): Promise<boolean> {
      const message = await trackedMessage(messageId)
      if (!message) return false
      return !record || (await hit(message, 'open', null)) !== undefined
    },

    /**
     * The stored URL of link `index` of the message (only that one: whatever a visitor adds is ignored), after
     * recording the click; undefined when there is no such message or link.
     */
    async clicked(
      messageId: number,
      index: number,
      campaignLinks?: (m: TrackedMessage) => Promise<string[] | null>,
      record = true,
    ) {
      const message = await trackedMessage(messageId)
      if (!message) return undefined
      const links = message.links ?? (campaignLinks ? await campaignLinks(message) : null)
      const url = links?.[index]
      if (!url) return undefined
      // A message erased between the lookup and now records nothing; the visitor still goes on.
      if (record) await hit(message, 'click', url)
      return url
    },

    /** A click on a link whose target its signed token carries (tracking-links `clickTo`). */
    async clickedTarget(messageId: number, url: string, record = true) {
      const message = await trackedMessage(messageId)
      if (!message) return undefined
      if (record) await hit(message, 'click', url)
      return url
    },

    /** One-click or page unsubscribe; idempotent: only the first one writes an event. */
    async unsubscribed(
      messageId: number,
      listIds: (m: TrackedMessage) => Promise<number[] | null>,
    ): Promise<boolean> {
      const message = await findTrackedMessage(ctx.dbHandle, messageId)
      if (!message) return false
      // A campaign's test copy (POST /campaigns/{id}/test) shows its unsubscribe page as recipients will see it,
      // and unsubscribes nobody: it stands outside the campaign, so it had no lists to leave but every list of
      // the account, where its tester, often the marketer, is subscribed. Nor does it write an `unsub` event,
      // which the email log and the webhook's list_unsubscribe would show as an unsubscription that was none.
      if (message.kind === 'test') return true
      const lists = await listIds(message)
      await retriedTransaction(ctx.db, async (tx) => {
        const hit = await reachMilestone(tx, messageId, 'unsubscribed_at', now())
        const changed = await unsubscribeEverywhere(tx, message.accountId, message.email, lists, now())
        if (hit?.first || changed.length > 0)
          await insertEvent(tx, { ...about(message), event: 'unsub', occurredAt: now() })
        if (hit?.first) await count(tx, message, { unsub: 1 })
      })
      return true
    },

    /**
     * A hard bounce is written (and suppresses) once per message, a soft one every time (each is a delivery attempt), but each
     * kind counts a message once and `bounce` counts it once whichever came first. A message the relay itself
     * refused (status 2, marked before this call) was never injected: its bounce is logged and suppresses the
     * address, but stays out of the counters, so `delivery` = inject − bounce never counts what was not sent.
     * (Counting it in `bounce` alone would take it from `inject` twice: 1 accepted and 2 refused would read
     * delivery 0 and bounce_rate 200 %.)
     */
    async bounced(
      ex: Executor,
      m: MessageRef,
      kind: 'hard' | 'soft',
      diagnostic: string | null,
    ): Promise<void> {
      const at = now()
      const stamp = await reachMilestone(ex, m.id, kind === 'hard' ? 'bounced_at' : 'soft_bounced_at', at)
      if (kind === 'hard') {
        // A report about a message already hard-bounced (a relay's retransmission) changes nothing: it would
        // count the person's bounces again and suppress again someone re-subscribed since, with no event to show.
        if (stamp?.first !== false) {
          await applyHardBounce(ex, m.accountId, m.email, diagnostic, at)
          await insertEvent(ex, { ...about(m), event: 'hard_bounce', msg: diagnostic, occurredAt: at })
        }
      } else {
        await applySoftBounce(ex, m.accountId, m.email, diagnostic, at)
        await insertEvent(ex, { ...about(m), event: 'soft_bounce', msg: diagnostic, occurredAt: at })
      }
      if (stamp && stamp.status !== 2) {
        await count(ex, m, {
          [kind === 'hard' ? 'hard_bounce' : 'soft_bounce']: stamp.first ? 1 : 0,
          bounce: stamp.bouncedBefore ? 0 : 1,
        })
      }
    },

    /**
     * A bounce or complaint about a cc or bcc copy of a transactional message: the copy's address is
     * suppressed (hard bounce, complaint) or counted (soft) as a recipient's would be, so it gets no more mail.
     * The message, its recipient and its counters stay as they are (the `to` address got its mail), and no
     * event is written: the email log and the webhook speak of the message's recipient.
     */
    async copyReported(
      ex: Executor,
      m: MessageRef,
      address: string,
      kind: 'hard' | 'soft' | 'complaint',
      diagnostic: string | null,
    ): Promise<void> {
      const at = now()
      if (kind === 'hard') await applyHardBounce(ex, m.accountId, address, diagnostic, at)
      else if (kind === 'soft') await applySoftBounce(ex, m.accountId, address, diagnostic, at)
      else await applyComplaint(ex, m.accountId, address, at)
    },

    async complained(ex: Executor, m: MessageRef, feedbackType: string | null): Promise<void> {
      const at = now()
      const hit = await reachMilestone(ex, m.id, 'complained_at', at)
      // As for hard bounces: a repeated report about the same message changes nothing.
      if (hit?.first !== false) {
        await applyComplaint(ex, m.accountId, m.email, at)
        await insertEvent(ex, { ...about(m), event: 'spam_complaint', msg: feedbackType, occurredAt: at })
      }
      if (hit?.first) await count(ex, m, { spam: 1 })
    },
  }
}

export type EventRecorder = ReturnType<typeof createEventRecorder>
