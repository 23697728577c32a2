import type { AppContext } from '../../core/context.js'
import { bounceHostFor, type SenderDomain } from '../domains/index.js'
import type { CampaignContent } from '../delivery/index.js'
import type { CampaignRow } from './campaigns.schemas.js'

/**
 * What a campaign's mail is made of, from its row and its sending domain. Without a verified domain (outbox
 * mode, or a web version of a campaign whose domain is gone) the mail is unsigned; pages need no signature.
 */
export function campaignContent(
  ctx: Pick<AppContext, 'config' | 'linkSecret'>,
  c: CampaignRow,
  sender: Pick<SenderDomain, 'name' | 'dkim'>,
): CampaignContent {
  return {
    campaignId: c.id,
    subject: c.subject,
    fromName: c.fromName,
    fromEmail: c.fromEmail,
    replyTo: c.replyTo,
    html: c.htmlText,
    plainText: c.plainText,
    bounceDomain: bounceHostFor(sender.name),
    dkim: sender.dkim,
    publicUrl: ctx.config.publicUrl,
    linkSecret: ctx.linkSecret,
  }
}
