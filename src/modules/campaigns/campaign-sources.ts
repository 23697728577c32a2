import { findCampaignById } from './campaigns.repo.js'
import type { AppContext } from '../../core/context.js'
import { dkimKeyOf, findDomainForAddress } from '../domains/index.js'
import { campaignContent } from './campaign-content.js'
import { contactMergeVars } from '../messages/index.js'
import { couponTags, couponVarsOfMessage, type CouponTags } from '../coupons/index.js'
import { storedSources, type MessageSources } from '../tracking/index.js'
import { CAMPAIGN_DOMAIN_TYPES } from './campaign-prepare.js'
import {
  compileCampaign,
  compileLinks,
  givenVars,
  personalLinks,
  providerTags,
  renderCampaignHtml,
  type LinkTemplates,
} from '../delivery/index.js'
import { contactForMerge } from './campaign-sources.repo.js'

type Ctx = Pick<AppContext, 'db' | 'config' | 'linkSecret'>

/** Links are frozen when a campaign starts sending and never change, so each process may keep them. */
const LINK_CACHE_SIZE = 200

/**
 * What the tracking pages need of campaign mail: its links and lists live on the campaign (not on 100,000
 * ledger rows), and its web version is rendered again for the recipient. Other mail asks `fallback`.
 */
export function campaignSources(ctx: Ctx, fallback: MessageSources = storedSources): MessageSources {
  // Per campaign: its links, and those with merge tags compiled (null when it has none).
  const frozen = new Map<number, { links: string[]; templates: LinkTemplates | null; coupons: CouponTags }>()
  async function campaignLinks(campaignId: number) {
    const cached = frozen.get(campaignId)
    if (cached) return cached
    const links = (await findCampaignById(ctx.db, campaignId))?.links
    if (!links) return undefined
    if (frozen.size >= LINK_CACHE_SIZE) frozen.delete(frozen.keys().next().value!)
    const found = { links, templates: compileLinks(links), coupons: couponTags(links) }
    frozen.set(campaignId, found)
    return found
  }
  return {
    async links(message) {
      if (message.campaignId === 0) return fallback.links(message)
      const found = await campaignLinks(message.campaignId)
      if (!found?.templates) return found?.links ?? null
      // Links with merge tags are filled in for the recipient now (an erased one gets only the address).
      const contact =
        message.contactId === null
          ? undefined
          : await contactForMerge(ctx.db, { contactId: message.contactId })
      const vars = contact ? contactMergeVars(contact) : { email: message.email }
      // A link that carries a coupon gets the code this mail was given.
      Object.assign(vars, await couponVarsOfMessage(ctx.db, found.coupons, message.id))
      return personalLinks(found.templates, vars)
    },
    async lists(message) {
      if (message.campaignId === 0) return fallback.lists(message)
      const targets = (await findCampaignById(ctx.db, message.campaignId))?.targets
      // Unsubscribing from a campaign leaves the lists it was sent to, those of its segments included.
      return targets ? [...new Set([...targets.lists, ...targets.segments.map((s) => s.list)])] : null
    },
    async html(message) {
      if (message.campaignId === 0 || message.contactId === null) return fallback.html(message)
      const c = await findCampaignById(ctx.db, message.campaignId)
      const contact = await contactForMerge(ctx.db, { contactId: message.contactId })
      if (!c || !contact) return null
      const domain = await findDomainForAddress(ctx.db, c.accountId, c.fromEmail, CAMPAIGN_DOMAIN_TYPES)
      const sender = { name: domain?.name ?? 'invalid', dkim: dkimKeyOf(domain) }
      const compiled = compileCampaign(campaignContent(ctx, c, sender))
      // The web version shows the codes the mail carried (none are handed out for it) and the recipient's
      // product recommendations as they are now: the sender's own providers, as a sent message is rendered again.
      const vars = Object.assign(
        contactMergeVars(contact),
        await givenVars(
          ctx,
          providerTags([c.subject, c.htmlText, c.plainText]),
          { id: message.id, accountId: c.accountId, email: message.email },
          'page',
        ),
      )
      return renderCampaignHtml(compiled, {
        messageId: message.id,
        email: message.email,
        name: message.recipientName,
        vars,
      })
    },
  }
}
