import type { AppContext } from '../../core/context.js'
import { fieldError } from '../../core/http/errors.js'
import { resolveSenderDomain } from '../domains/index.js'
import { campaignContent } from './campaign-content.js'
import { contactMergeVars } from '../messages/index.js'
import { deliver } from '../outcomes/index.js'
import { couponTags, sampleCouponVars } from '../coupons/index.js'
import { CAMPAIGN_DOMAIN_TYPES } from './campaign-prepare.js'
import {
  compileCampaign,
  compileLinks,
  personalLinks,
  renderCampaignHtml,
  renderCampaignMail,
} from '../delivery/index.js'
import type { CampaignRow } from './campaigns.schemas.js'
import { contactForMerge } from './campaign-sources.repo.js'
import { senderIdentity } from './campaign-sender-identity.js'
import { insertTestMessage, storeTestCopy } from './campaign-test-send.repo.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'config' | 'mailer' | 'linkSecret' | 'log'>

/**
 * Sends the campaign as it stands to a few addresses, now. The copies are `test` messages outside the
 * campaign (campaign_id 0), so their opens and clicks work but count in no statistic. An address that is a
 * subscriber gets their own merge values; another gets only its address.
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
  // Test copies consume no codes: they show a sample (see sampleCouponVars).
  const coupons = await sampleCouponVars(
    ctx,
    couponTags([c.subject, c.htmlText, c.plainText, ...compiled.links]),
    c.accountId,
  )
  let sent = 0
  for (const email of emails) {
    const contact = await contactForMerge(ctx.db, { accountId: c.accountId, email })
    const vars = Object.assign(contact ? contactMergeVars(contact) : { email }, coupons)
    const message = await insertTestMessage(ctx.db, {
      accountId: c.accountId,
      contactId: contact?.id ?? null,
      email,
      subject: c.subject,
      // A test copy stands outside the campaign, so it keeps its links, personal ones filled in.
      links: linkTemplates ? personalLinks(linkTemplates, vars) : compiled.links,
    })
    const recipient = {
      messageId: message.id,
      email,
      name: contact ? `${contact.name} ${contact.surname}`.trim() : '',
      vars,
    }
    const mail = renderCampaignMail(compiled, recipient)
    // The web version of a test copy cannot be rendered from a campaign it is not part of: it is kept, with
    // the subject as sent (the email log names the copy by it).
    await storeTestCopy(ctx.db, message.id, {
      subject: mail.subject,
      html: renderCampaignHtml(compiled, recipient),
    })
    const outcome = await deliver(ctx, message, mail)
    if (outcome.outcome === 'accepted') sent++
  }
  return sent
}
