import { findCampaignById } from './campaigns.repo.js'
import type { AppContext } from '../../core/context.js'
import { findDomainForAddress } from '../domains/index.js'
import { campaignContent } from './campaign-content.js'
import { contactMergeVars } from '../messages/index.js'
import { storedSources, type MessageSources } from '../tracking/index.js'
import { CAMPAIGN_DOMAIN_TYPES } from './campaign-prepare.js'
import { compileCampaign, renderCampaignHtml } from './campaign-render.js'
import { contactForMerge } from './campaign-sources.repo.js'

type Ctx = Pick<AppContext, 'db' | 'config' | 'linkSecret'>

/** Links are frozen when a campaign starts sending and never change, so each process may keep them. */
const LINK_CACHE_SIZE = 200

/**
 * What the tracking pages need of campaign mail: its links and lists live on the campaign (not on 100,000
 * ledger rows), and its web version is rendered again for the recipient. Other mail uses the stored sources.
 */
export function campaignSources(ctx: Ctx): MessageSources {
  const links = new Map<number, string[]>()
  return {
    async links(message) {
      if (message.campaignId === 0) return storedSources.links(message)
      const cached = links.get(message.campaignId)
      if (cached) return cached
      const found = (await findCampaignById(ctx.db, message.campaignId))?.links ?? null
      if (found) {
        if (links.size >= LINK_CACHE_SIZE) links.delete(links.keys().next().value!)
        links.set(message.campaignId, found)
      }
      return found
    },
    async lists(message) {
      if (message.campaignId === 0) return storedSources.lists(message)
      const targets = (await findCampaignById(ctx.db, message.campaignId))?.targets
      // Unsubscribing from a campaign leaves the lists it was sent to, those of its segments included.
      return targets ? [...new Set([...targets.lists, ...targets.segments.map((s) => s.list)])] : null
    },
    async html(message) {
      if (message.campaignId === 0 || message.contactId === null) return storedSources.html(message)
      const c = await findCampaignById(ctx.db, message.campaignId)
      const contact = await contactForMerge(ctx.db, { contactId: message.contactId })
      if (!c || !contact) return null
      const domain = await findDomainForAddress(ctx.db, c.accountId, c.fromEmail, CAMPAIGN_DOMAIN_TYPES)
      const compiled = compileCampaign(campaignContent(ctx, c, domain))
      return renderCampaignHtml(compiled, {
        messageId: message.id,
        email: message.email,
        name: message.recipientName,
        vars: contactMergeVars(contact),
      })
    },
  }
}
