import type { AppContext } from '../../core/context.js'
import { bounceHostFor, resolveSenderDomain, type DomainType } from '../domains/index.js'
import { composeMessage, queuedOfBatch, type MessageRow } from '../messages/index.js'
import { deliver, recordSoftFailure } from '../outcomes/index.js'
import { trackingLinks } from '../tracking/index.js'
import { assignCouponVars, couponTags } from '../coupons/index.js'
import { recommendationVars, recommendTags } from '../recommenders/index.js'
import { findBatch, storeRendered } from './transactional.repo.js'
import { compileBatch, renderFor, type CompiledBatch } from './transactional.render.js'

/** Contract §2: a verified transactional domain, or else a verified sending domain, signs transactional mail. */
export const SENDER_DOMAIN_TYPES: readonly DomainType[] = ['transactional', 'sending']
/** Messages of one batch in flight at once: enough to keep a few pooled SMTP connections busy. */
const CONCURRENCY = 4

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'mailer' | 'config' | 'linkSecret' | 'log'>

export interface BatchResult {
  accepted: number
  refused: number
  deferred: number
}

async function forEachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
}

async function prepare(ctx: Ctx, batchId: number): Promise<CompiledBatch | undefined> {
  const batch = await findBatch(ctx.db, batchId)
  if (!batch) return undefined
  const domain = await resolveSenderDomain(ctx, ctx.db, batch.accountId, batch.fromEmail, SENDER_DOMAIN_TYPES)
  return compileBatch(batch, {
    bounceDomain: bounceHostFor(domain.name),
    // The intake checked the domain; if it lost its verification since (or in outbox mode), it goes unsigned.
    dkim: domain.dkim,
    webVersion: trackingLinks(ctx).webVersion,
  })
}

/**
 * Renders and sends every still-queued message of a batch. Messages the relay accepted or refused leave
 * status 0, so a retried job never sends them again. When the relay defers some (4xx, no connection), the
 * job throws so pg-boss retries it; on the last try those become soft bounces instead.
 */
export async function sendBatch(ctx: Ctx, batchId: number, lastTry: boolean): Promise<BatchResult> {
  const result: BatchResult = { accepted: 0, refused: 0, deferred: 0 }
  const compiled = await prepare(ctx, batchId)
  if (!compiled) return result
  const queued = await queuedOfBatch(ctx.db, batchId)
  // Codes for every queued recipient in one statement per folder; a retried job finds the codes it gave.
  const { batch } = compiled
  const coupons = await assignCouponVars(ctx, couponTags([batch.subject, batch.html, batch.text]), {
    accountId: batch.accountId,
    campaignId: 0,
    messageIds: queued.map((m) => m.id),
  })
  const recs = await recommendationVars(ctx, recommendTags([batch.subject, batch.html, batch.text]), {
    accountId: batch.accountId,
    recipients: queued.map((m) => ({ messageId: m.id, email: m.email })),
  })
  const deferred: { message: MessageRow; error: string }[] = []
  await forEachLimited(queued, CONCURRENCY, async (message) => {
    const content = renderFor(compiled, message, { ...coupons.get(message.id), ...recs.get(message.id) })
    const { mail, links, webHtml } = composeMessage(ctx, content)
    await storeRendered(ctx.db, message.id, { subject: mail.subject, html: webHtml ?? null, links })
    const sent = await deliver(ctx, message, mail)
    if (sent.outcome === 'accepted') result.accepted++
    else if (sent.outcome === 'hard_bounce') result.refused++
    else deferred.push({ message, error: sent.error ?? 'delivery deferred' })
  })
  result.deferred = deferred.length
  if (deferred.length === 0) return result
  if (!lastTry) {
    throw new Error(`transactional batch ${batchId}: ${deferred.length} deferred (${deferred[0]!.error})`)
  }
  for (const d of deferred) await recordSoftFailure(ctx, d.message, d.error)
  return result
}
