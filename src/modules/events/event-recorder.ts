import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { findTrackedMessage, reachMilestone, type TrackedMessage } from '../messages/index.js'
import {
  applyComplaint,
  applyHardBounce,
  applySoftBounce,
  unsubscribeEverywhere,
} from '../subscribers/index.js'
import { insertEvent } from './events.repo.js'

type Ctx = Pick<AppContext, 'db' | 'clock'>
type MessageRef = Omit<TrackedMessage, 'links'>

const about = (m: MessageRef) => ({
  accountId: m.accountId,
  messageId: m.id,
  campaignId: m.campaignId,
  pipelineId: m.pipelineId,
  actionId: m.actionId,
  contactId: m.contactId,
  email: m.email,
})

/**
 * Everything that comes back from mail lands here: each call writes its event and its consequences (first
 * open/click stamps, suppression, unsubscription) in one transaction, so numbers and states never disagree.
 */
export function createEventRecorder(ctx: Ctx) {
  const now = () => ctx.clock.now()
  return {
    async sent(ex: Executor, m: MessageRef): Promise<void> {
      await insertEvent(ex, { ...about(m), event: 'send', occurredAt: now() })
    },

    /** False when the message does not exist. */
    async opened(messageId: number): Promise<boolean> {
      return ctx.db.transaction(async (tx) => {
        const hit = await reachMilestone(tx, messageId, 'first_open_at', now())
        if (!hit) return false
        await insertEvent(tx, { ...about(hit.message), event: 'open', occurredAt: now() })
        return true
      })
    },

    /**
     * The stored URL of link `index` of the message (only that one: whatever a visitor adds is ignored), after
     * recording the click; undefined when there is no such message or link.
     */
    async clicked(
      messageId: number,
      index: number,
      campaignLinks?: (m: TrackedMessage) => Promise<string[] | null>,
    ) {
      const message = await findTrackedMessage(ctx.db, messageId)
      if (!message) return undefined
      const links = message.links ?? (campaignLinks ? await campaignLinks(message) : null)
      const url = links?.[index]
      if (!url) return undefined
      await ctx.db.transaction(async (tx) => {
        await reachMilestone(tx, messageId, 'first_click_at', now())
        await insertEvent(tx, { ...about(message), event: 'click', url, occurredAt: now() })
      })
      return url
    },

    /** One-click or page unsubscribe; idempotent: only the first one writes an event. */
    async unsubscribed(
      messageId: number,
      listIds: (m: TrackedMessage) => Promise<number[] | null>,
    ): Promise<boolean> {
      const message = await findTrackedMessage(ctx.db, messageId)
      if (!message) return false
      const lists = await listIds(message)
      await ctx.db.transaction(async (tx) => {
        const hit = await reachMilestone(tx, messageId, 'unsubscribed_at', now())
        const changed = await unsubscribeEverywhere(tx, message.accountId, message.email, lists, now())
        if (hit?.first || changed.length > 0)
          await insertEvent(tx, { ...about(message), event: 'unsub', occurredAt: now() })
      })
      return true
    },

    async bounced(
      ex: Executor,
      m: MessageRef,
      kind: 'hard' | 'soft',
      diagnostic: string | null,
    ): Promise<void> {
      const at = now()
      if (kind === 'hard') {
        const hit = await reachMilestone(ex, m.id, 'bounced_at', at)
        await applyHardBounce(ex, m.accountId, m.email, diagnostic, at)
        if (hit?.first !== false)
          await insertEvent(ex, { ...about(m), event: 'hard_bounce', msg: diagnostic, occurredAt: at })
      } else {
        await applySoftBounce(ex, m.accountId, m.email, diagnostic, at)
        await insertEvent(ex, { ...about(m), event: 'soft_bounce', msg: diagnostic, occurredAt: at })
      }
    },

    async complained(ex: Executor, m: MessageRef, feedbackType: string | null): Promise<void> {
      const at = now()
      const hit = await reachMilestone(ex, m.id, 'complained_at', at)
      await applyComplaint(ex, m.accountId, m.email, at)
      if (hit?.first !== false) {
        await insertEvent(ex, { ...about(m), event: 'spam_complaint', msg: feedbackType, occurredAt: at })
      }
    },
  }
}

export type EventRecorder = ReturnType<typeof createEventRecorder>
