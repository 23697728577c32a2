import { findCampaignById } from './campaigns.repo.js'
import type { AppContext } from '../../core/context.js'
import { resolveSenderDomain } from '../domains/index.js'
import { findSegments, segmentMembersSql } from '../segments/index.js'
import { CAMPAIGN_DOMAIN_TYPES, trackableHtml, type PreparingHelp } from '../delivery/index.js'
import {
  analyzeLedger,
  errorCampaign,
  finishIfDone,
  freezeRecipients,
  ledgerRowEstimate,
  lockPreparing,
  setSender,
  startSending,
} from './campaign-send.repo.js'
import { campaignErrors } from './campaign-errors.js'
import { resolveSender } from './campaign-sender-identity.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'config' | 'log'>

// The sender signs a campaign's test copies too, so the delivery module holds the domain types campaign mail uses.
export { CAMPAIGN_DOMAIN_TYPES }

/**
 * Step 1 ("preparing") of a send, in one transaction: fixes the sender and checks its domain, freezes the
 * recipients into the ledger and the links of the HTML, and moves the campaign to sending (2). The campaign
 * row is locked and skipped by other workers, and a crash rolls the whole step back, so it runs exactly once.
 */
export async function prepareCampaign(
  ctx: Ctx,
  campaignId: number,
  links: FindLinks = async (content) => trackableHtml(content).links,
): Promise<boolean> {
  const { handled, frozen } = await freezeCampaign(ctx, campaignId, links)
  if (frozen > 0) await refreshLedgerStatistics(ctx, frozen)
  return handled
}

/** How the links of a campaign's HTML are found: on a signing thread when a sender prepares it. */
type FindLinks = NonNullable<PreparingHelp['links']>

/** Below this, a freeze leaves the statistics to autovacuum whatever the ledger's size. */
const REFRESH_MIN_ROWS = 1000

/**
 * A freeze that grew the ledger by a tenth or more has its statistics refreshed at once, not when autovacuum next
 * looks (at its next round, a minute or more later, for the same tenth). The hottest statements are prepared and
 * planned once per connection: one planned while the ledger was nearly empty (a new installation's first order
 * confirmations) scans the whole table by hash join after a freeze of 1,000,000 rows, until an ANALYZE makes it
 * plan again. Measured beside transactional mail: each batch's marking took 100–200 ms instead of a few for the
 * minute and a half autovacuum took, and PostgreSQL's CPU a message was 2 to 6 times the plain send's.
 */
async function refreshLedgerStatistics(ctx: Ctx, frozen: number): Promise<void> {
  if (frozen < REFRESH_MIN_ROWS) return
  try {
    // The estimate is the last ANALYZE's, before these rows: they are the growth.
    if (frozen * 10 < (await ledgerRowEstimate(ctx.db))) return
    await ctx.db.transaction((tx) => analyzeLedger(tx))
  } catch (err) {
    // Only the plans wait for autovacuum then; the campaign sends either way.
    ctx.log.warn({ err }, 'the send ledger statistics were not refreshed after a freeze')
  }
}

/** The transaction of prepareCampaign; how many recipients it froze (0 when it stopped or had nothing to do). */
async function freezeCampaign(
  ctx: Ctx,
  campaignId: number,
  findLinks: FindLinks,
): Promise<{ handled: boolean; frozen: number }> {
  const none = (handled: boolean) => ({ handled, frozen: 0 })
  return retriedTransaction(ctx.db, async (tx) => {
    if (!(await lockPreparing(tx, campaignId))) return none(false)
    const found = await findCampaignById(tx, campaignId)
    if (!found) return none(false)
    const now = ctx.clock.now()
    // The sender is fixed here, with the recipients: fields the campaign leaves empty come from its lists.
    const { sender, listsLeft } = await resolveSender(tx, found)
    const c = { ...found, ...sender }
    if (c.fromEmail === '') {
      const why = listsLeft ? campaignErrors.noFromEmail() : campaignErrors.noFromEmailListsGone()
      await errorCampaign(tx, c.id, why, now)
      return none(true)
    }
    if (
      sender.fromName !== found.fromName ||
      sender.fromEmail !== found.fromEmail ||
      sender.replyTo !== found.replyTo
    )
      await setSender(tx, c.id, sender)
    const domain = await resolveSenderDomain(ctx, tx, c.accountId, c.fromEmail, CAMPAIGN_DOMAIN_TYPES)
    if (!domain.allowed) {
      await errorCampaign(tx, c.id, campaignErrors.noSendingDomain(domain.name), now)
      return none(true)
    }
    // A segment deleted since the campaign was saved no longer selects anyone.
    const segments = await findSegments(
      tx,
      c.accountId,
      c.targets.segments.map((s) => s.id),
    )
    const freezing = freezeRecipients(
      tx,
      c,
      c.targets.lists,
      segments.map((s) => segmentMembersSql(c.accountId, s.listId, s.filter, now)),
      now,
    )
    // The links are found while PostgreSQL freezes the recipients, once the statement is on its way, rather than
    // after it: for 100,000 recipients the freeze took 1.3 s and finding them 0.46 s more before the first message
    // could leave (measured). On a signing thread when the sender lends one: the CSS inliner loads with the first
    // campaign, and on the main thread that stopped the API's calls too (0.29-0.72 s, measured beside
    // transactional mail). A rejected freeze is awaited below, so none goes unobserved.
    freezing.catch(() => undefined)
    await new Promise<void>((resolve) => setImmediate(resolve))
    const [links, n] = await Promise.all([
      findLinks({ html: c.htmlText, publicUrl: ctx.config.publicUrl }),
      freezing,
    ])
    await startSending(tx, c.id, links, n, now)
    if (n === 0) await finishIfDone(tx, c.id, now)
    return { handled: true, frozen: n }
  })
}
