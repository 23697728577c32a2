import type { AppContext } from '../../core/context.js'
import { bounceHostFor, dkimKeyOf, type DomainRow } from '../domains/index.js'
import type { CampaignContent } from './campaign-render.js'
import type { CampaignRow } from './campaigns.schemas.js'

/**
 * What a campaign's mail is made of, from its row and its sending domain. Without a verified domain (a web
 * version of a campaign whose domain is gone) the mail would be unsigned; pages need no signature anyway.
 */
export function campaignContent(
  ctx: Pick<AppContext, 'config' | 'linkSecret'>,
  c: CampaignRow,
  domain: DomainRow | undefined,
): CampaignContent {
  return {
    campaignId: c.id,
    subject: c.subject,
    fromName: c.fromName,
    fromEmail: c.fromEmail,
    replyTo: c.replyTo,
    html: c.htmlText,
    plainText: c.plainText,
    bounceDomain: bounceHostFor(domain?.name ?? 'invalid'),
    dkim: dkimKeyOf(domain),
    publicUrl: ctx.config.publicUrl,
    linkSecret: ctx.linkSecret,
  }
}
