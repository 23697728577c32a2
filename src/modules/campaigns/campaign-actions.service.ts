import type { AppContext } from '../../core/context.js'
import { fieldError } from '../../core/http/errors.js'
import { isValidEmail, normalizeEmail } from '../../core/http/email.js'
import { parseSqlDateTime } from '../../core/http/formats.js'
import { campaignErrors } from './campaign-errors.js'
import { cancelQueued, ledgerState, moveCampaign, setPaused } from './campaign-send.repo.js'
import { wakeSenders } from '../delivery/index.js'
import { requireCampaign } from './require-campaign.js'
import { sendTestCopies } from './campaign-test-send.js'
import type { CampaignStatus } from './campaigns.table.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'config' | 'mailer' | 'linkSecret' | 'log'>

const STATUS_NAMES: Record<CampaignStatus, string> = {
  0: 'draft',
  1: 'preparing',
  2: 'sending',
  3: 'sent',
  4: 'errored',
  7: 'scheduled',
}
/** Test copies per request: enough for a team's inboxes, too few to be a way around sending. */
export const MAX_TEST_EMAILS = 20

/**
 * The 422 of an action the campaign's state refuses, naming that state as the person sees it: a paused campaign
 * is sending (2) and a cancelled one errored (4), but "A sending campaign cannot be paused" of a paused one, or
 * "An errored campaign cannot be resumed" of a cancelled one (errored ones can be), told them the wrong thing.
 */
const wrongStatus = (
  action: string,
  c: { status: CampaignStatus; pausedAt: Date | null; errorCode: string | null },
) => {
  const name =
    c.status === 2 && c.pausedAt
      ? 'paused'
      : c.status === 4 && c.errorCode === 'cancelled'
        ? 'cancelled'
        : STATUS_NAMES[c.status]
  return fieldError('status', `${/^[aeiou]/.test(name) ? 'An' : 'A'} ${name} campaign cannot be ${action}.`)
}

/** The send controls of contract §4: send, schedule, unschedule, pause, resume, cancel and test copies. */
export function createCampaignActions(ctx: Ctx) {
  const campaignOf = (accountId: number, id: number) => requireCampaign(ctx, accountId, id)

  return {
    /** 0 or 7 → 1 (preparing); a worker freezes the recipients and sends. A schedule it had no longer applies. */
    async send(accountId: number, id: number) {
      const c = await campaignOf(accountId, id)
      const now = ctx.clock.now()
      const moved = await moveCampaign(ctx.db, accountId, id, [0, 7], 1, now, {
        sentAt: now,
        scheduledAt: null,
        error: null,
      })
      if (!moved) throw wrongStatus('sent', c)
      wakeSenders(ctx)
      return { id, status: 1 as const }
    },

    async schedule(accountId: number, id: number, scheduledAt: string) {
      const c = await campaignOf(accountId, id)
      const at = parseSqlDateTime(scheduledAt.trim())
      if (!at) throw fieldError('scheduled_at', 'The scheduled_at does not match the format Y-m-d H:i:s.')
      if (at.getTime() <= ctx.clock.now().getTime())
        throw fieldError('scheduled_at', 'The scheduled_at must be a date in the future.')
      const moved = await moveCampaign(ctx.db, accountId, id, [0, 7], 7, ctx.clock.now(), { scheduledAt: at })
      if (!moved) throw wrongStatus('scheduled', c)
      return { id, status: 7 as const }
    },

    async unschedule(accountId: number, id: number) {
      const c = await campaignOf(accountId, id)
      const moved = await moveCampaign(ctx.db, accountId, id, [7], 0, ctx.clock.now(), { scheduledAt: null })
      if (!moved) throw wrongStatus('unscheduled', c)
      return { id, status: 0 as const }
    },

    /** A sending campaign stops claiming new batches; the batch in hand still goes out, once. */
    async pause(accountId: number, id: number) {
      const c = await campaignOf(accountId, id)
      if (c.status !== 2 || c.pausedAt) throw wrongStatus('paused', c)
      const now = ctx.clock.now()
      if (!(await setPaused(ctx.db, accountId, id, now, now))) throw wrongStatus('paused', c)
      return { id, status: 2 as const, paused: true }
    },

    /**
     * Resumes a paused campaign, or one that errored (not cancelled): with recipients still queued it sends on;
     * stopped before any were frozen (no from_email, no verified domain) it is prepared again, so a fix made
     * since (a list's from_email, a verified domain) applies.
     */
    async resume(accountId: number, id: number) {
      const c = await campaignOf(accountId, id)
      const now = ctx.clock.now()
      const clear = { error: null, unpause: true }
      const ledger = c.status === 4 && c.errorCode !== 'cancelled' ? await ledgerState(ctx.db, id) : 'done'
      let status: 1 | 2 = 2
      if (c.status === 2 && c.pausedAt) {
        await setPaused(ctx.db, accountId, id, null, now)
      } else if (ledger === 'pending') {
        await moveCampaign(ctx.db, accountId, id, [4], 2, now, clear)
      } else if (ledger === 'none') {
        await moveCampaign(ctx.db, accountId, id, [4], 1, now, clear)
        status = 1
      } else {
        throw wrongStatus('resumed', c)
      }
      wakeSenders(ctx)
      return { id, status, paused: false }
    },

    /** Stops for good: a scheduled campaign goes back to draft; a sending one ends errored as cancelled. */
    async cancel(accountId: number, id: number) {
      const c = await campaignOf(accountId, id)
      const now = ctx.clock.now()
      if (c.status === 7) return this.unschedule(accountId, id)
      if (c.status !== 1 && c.status !== 2) throw wrongStatus('cancelled', c)
      const done = await retriedTransaction(ctx.db, async (tx) => {
        const why = campaignErrors.cancelled()
        const moved = await moveCampaign(tx, accountId, id, [1, 2], 4, now, { error: why })
        if (moved) await cancelQueued(tx, id)
        return moved
      })
      if (!done) throw wrongStatus('cancelled', c)
      return { id, status: 4 as const }
    },

    /** Test copies to the addresses given; they count in no statistic. */
    async test(accountId: number, id: number, emails: string[]) {
      const c = await campaignOf(accountId, id)
      const addresses = [...new Set(emails.map(normalizeEmail))]
      addresses.forEach((a, i) => {
        if (!isValidEmail(a)) throw fieldError(`emails.${i}`, 'The emails must be valid email addresses.')
      })
      if (addresses.length === 0) throw fieldError('emails', 'The emails field is required.')
      if (addresses.length > MAX_TEST_EMAILS)
        throw fieldError('emails', `The emails may not have more than ${MAX_TEST_EMAILS} items.`)
      const sent = await sendTestCopies(ctx, c, addresses)
      return { success: true, sent }
    },
  }
}
