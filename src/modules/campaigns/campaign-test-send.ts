import type { AppContext } from '../../core/context.js'
import { fieldError } from '../../core/http/errors.js'
import { resolveSenderDomain } from '../domains/index.js'
import { campaignContent } from './campaign-content.js'
import { contactMergeVars } from '../messages/index.js'
import { couponTags, sampleCouponVars } from '../coupons/index.js'
import {
  CAMPAIGN_DOMAIN_TYPES,
  compileCampaign,
  compileLinks,
  personalLinks,
  queueMail,
  renderCampaignHtml,
  renderCampaignSubject,
  wakeSenders,
  type MailRecipient,
} from '../delivery/index.js'
import type { CampaignRow } from './campaigns.schemas.js'
import { contactForMerge } from './campaign-sources.repo.js'
import { senderIdentity } from './campaign-sender-identity.js'
import { storeTestCopy } from './campaign-test-send.repo.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'config' | 'linkSecret' | 'log'>

/**
 * Queues the campaign as it stands for a few addresses; the one sender sends the copies (answering after the
 * rows commit, as transactional calls do: `sent` counts the copies queued). The copies are `test` messages
 * outside the campaign (campaign_id 0) with a body row of kind `test` holding the campaign's content, so their
 * opens and clicks work but count in no statistic. An address that is a subscriber gets their own merge
 * values; another gets only its address.
 */
export async function sendTestCopies(ctx: Ctx, row: CampaignRow, emails: string[]): Promise<number> {
  // The sender the campaign would go out with now (its empty fields from its lists), as sending fixes it.
  const c = { ...row, ...(await senderIdentity(ctx.db, row)) }
  if (c.fromEmail === '')
    throw fieldError(
      'from_email',
      'The from_email field is required: neither the campaign nor its lists have one.',
    )
  const domain = await resolveSenderDomain(ctx, ctx.db, c.accountId, c.fromEmail, CAMPAIGN_DOMAIN_TYPES)
  if (!domain.allowed) {
    throw fieldError('from_email', 'The from_email must belong to a verified sending domain.')
  }
  const compiled = compileCampaign(campaignContent(ctx, c, domain))
  const linkTemplates = compileLinks(compiled.links)
  // Test copies consume no codes: they show a sample (see sampleCouponVars). No vars provider runs for them.
  const coupons = await sampleCouponVars(
    ctx,
    couponTags([c.subject, c.htmlText, c.plainText, ...compiled.links]),
    c.accountId,
  )
  const recipients: MailRecipient[] = []
  for (const email of emails) {
    const contact = await contactForMerge(ctx.db, { accountId: c.accountId, email })
    recipients.push({
      email,
      name: contact ? `${contact.name} ${contact.surname}`.trim() : '',
      contactId: contact?.id ?? null,
      vars: Object.assign(contact ? contactMergeVars(contact) : { email }, coupons),
    })
  }
  await retriedTransaction(ctx.db, async (tx) => {
    const { messageIds } = await queueMail(
      tx,
      {
        accountId: c.accountId,
        fromName: c.fromName,
        fromEmail: c.fromEmail,
        replyTo: c.replyTo || null,
        subject: c.subject,
        html: c.htmlText,
        text: c.plainText,
        trackOpens: true,
        trackClicks: true,
        marketing: true,
      },
      recipients,
      { kind: 'test' },
      ctx.clock.now(),
    )
    for (const [i, r] of recipients.entries()) {
      const recipient = { messageId: messageIds[i]!, email: r.email, name: r.name, vars: r.vars ?? {} }
      // A test copy stands outside the campaign, so it keeps its links (personal ones filled in) and its web
      // version (which cannot be rendered from a campaign it is not part of), with the subject as sent (the
      // email log names the copy by it).
      await storeTestCopy(tx, recipient.messageId, {
        subject: renderCampaignSubject(compiled, recipient),
        html: renderCampaignHtml(compiled, recipient),
        links: linkTemplates ? personalLinks(linkTemplates, recipient.vars) : compiled.links,
      })
    }
  })
  wakeSenders(ctx)
  return recipients.length
}
