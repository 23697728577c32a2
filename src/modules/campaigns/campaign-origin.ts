import { isTransientDatabaseError } from '../../core/db/errors.js'
import { resolveSenderDomain } from '../domains/index.js'
import type { CampaignOrigin } from '../delivery/index.js'
import { campaignContent } from './campaign-content.js'
import { campaignErrors } from './campaign-errors.js'
import { CAMPAIGN_DOMAIN_TYPES, prepareCampaign } from './campaign-prepare.js'
import {
  anyAccepted,
  errorCampaign,
  finishIfDone,
  preparingCampaignIds,
  sendable,
  sendingCampaignIds,
  startDueScheduled,
} from './campaign-send.repo.js'
import { findCampaignById } from './campaigns.repo.js'
import { contactMergeVars } from '../messages/index.js'

type Ctx = Parameters<CampaignOrigin['prepare']>[0]

/** How often a sender looks for scheduled campaigns whose time came. */
const SCHEDULE_CHECK_MS = 1000
const lastScheduleCheck = new WeakMap<object, number>()

/**
 * The campaigns' side of the one sender: preparing (freezing recipients), the campaign's statuses and errors,
 * and what its mail is made of. Rows are sent by the delivery module like every other mail.
 */
export const campaignOrigin: CampaignOrigin = {
  async prepare(ctx: Ctx, help) {
    const now = ctx.clock.now().getTime()
    if (now - (lastScheduleCheck.get(ctx.db) ?? 0) >= SCHEDULE_CHECK_MS) {
      lastScheduleCheck.set(ctx.db, now)
      await startDueScheduled(ctx.db, ctx.clock.now())
    }
    const ids = await preparingCampaignIds(ctx.db)
    if (ids.length) help?.starting()
    for (const id of ids) {
      try {
        await prepareCampaign(ctx, id, help?.links)
      } catch (err) {
        // The freeze is one transaction: after a database that was unavailable, the next round freezes again.
        if (isTransientDatabaseError(err)) {
          ctx.log.warn(
            { err, campaignId: id },
            'campaign not prepared: the database was unavailable; trying again',
          )
          continue
        }
        await campaignOrigin.failed(ctx, id)
        ctx.log.error({ err, campaignId: id }, 'campaign stopped on an unexpected error')
      }
    }
  },
  sendingIds: (ex) => sendingCampaignIds(ex),
  sendable,
  async content(ctx: Ctx, campaignId) {
    const c = await findCampaignById(ctx.db, campaignId)
    if (!c) return undefined
    const domain = await resolveSenderDomain(ctx, ctx.db, c.accountId, c.fromEmail, CAMPAIGN_DOMAIN_TYPES)
    if (!domain.allowed) {
      await errorCampaign(ctx.db, c.id, campaignErrors.domainLost(domain.name), ctx.clock.now())
      return undefined
    }
    return { accountId: c.accountId, content: campaignContent(ctx, c, domain) }
  },
  finishIfDone,
  async nothingAccepted(ctx: Ctx, campaignId, lastError) {
    if (!(await anyAccepted(ctx.db, campaignId)))
      await errorCampaign(ctx.db, campaignId, campaignErrors.relayRefusedAll(lastError), ctx.clock.now())
  },
  mergeVars: (row) => contactMergeVars(row),
  async failed(ctx: Ctx, campaignId) {
    await errorCampaign(ctx.db, campaignId, campaignErrors.internal(), ctx.clock.now())
  },
}
