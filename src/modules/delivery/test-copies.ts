import type { AppContext } from '../../core/context.js'
import type { MergeValue } from '../../core/mail/merge-tags.js'
import { bounceHostFor } from '../domains/index.js'
import { CAMPAIGN_DOMAIN_TYPES, senderDomainOf } from './body-content.js'
import type { BodyRow } from './bodies.repo.js'
import type { ClaimedRow } from './ledger.repo.js'
import type { CampaignContent, CampaignRecipient } from './render.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'config' | 'linkSecret' | 'log'>

/**
 * What a campaign's test copies (a body row of kind `test`) are sent with: the campaign's content as it stood
 * when they were asked for, rendered as the campaign's own mail is (links tracked by index, open pixel,
 * List-Unsubscribe) and signed with the kind of domain campaign mail uses. The copies stand outside the
 * campaign (campaign_id 0), so they count in none of its statistics.
 */
export async function testCopyContent(ctx: Ctx, body: BodyRow): Promise<CampaignContent> {
  const domain = await senderDomainOf(ctx, body.accountId, body.fromEmail, CAMPAIGN_DOMAIN_TYPES)
  return {
    campaignId: 0,
    subject: body.subject,
    fromName: body.fromName,
    fromEmail: body.fromEmail,
    replyTo: body.replyTo ?? '',
    html: body.html ?? '',
    plainText: body.text,
    bounceDomain: bounceHostFor(domain.name),
    dkim: domain.dkim,
    publicUrl: ctx.config.publicUrl,
    linkSecret: ctx.linkSecret,
  }
}

/**
 * A test copy's recipient with the values fixed when it was queued (the subscriber's own, sample coupon
 * codes) and what the test-copy providers gave (recommendations for the addressee): a test hands out no
 * real code.
 */
export function testCopyRecipient(
  r: Pick<ClaimedRow, 'id' | 'email' | 'recipient_name' | 'vars'>,
  provided?: Record<string, string>,
): CampaignRecipient {
  // No prototype: `*|constructor|*` renders empty.
  const vars = Object.assign(Object.create(null) as Record<string, MergeValue>, r.vars ?? { email: r.email })
  if (provided) Object.assign(vars, provided)
  return { messageId: r.id, email: r.email, name: r.recipient_name, vars }
}
