import type { CampaignRow } from './campaigns.schemas.js'
import { findCampaignById } from './campaigns.repo.js'
import { createHash } from 'node:crypto'
import type { AppContext } from '../../core/context.js'
import { createEventRecorder } from '../events/index.js'
import { resolveSenderDomain, type SenderDomain } from '../domains/index.js'
import { campaignContent } from './campaign-content.js'
import { campaignErrors } from './campaign-errors.js'
import { contactMergeVars, markRefused, recordSoftFailure, smtpFailure } from '../messages/index.js'
import { enqueueWebhookEvents } from '../webhooks/index.js'
import { assignCouponVars, couponTags, type CouponTags } from '../coupons/index.js'
import { CAMPAIGN_DOMAIN_TYPES, prepareCampaign } from './campaign-prepare.js'
import type { CampaignRecipient } from './campaign-render.js'
import {
  anyAccepted,
  claimExpired,
  claimQueued,
  deferClaimed,
  errorCampaign,
  finishIfDone,
  hasQueued,
  markSent,
  preparingCampaignIds,
  releaseClaimed,
  renewClaim,
  sendingCampaignIds,
  startDueScheduled,
  type AcceptedRow,
  type ClaimedRecipient,
} from './campaign-send.repo.js'
import { createCampaignSigner, type CampaignSigner } from './campaign-signer.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'config' | 'mailer' | 'linkSecret' | 'log'>

/** Rows one sender claims at a time: the most a crash can send twice. */
export const SEND_BATCH = 500
/** Recipients per signing task: big enough to amortise the hop to a thread, small enough to keep both busy. */
const SIGN_CHUNK = 50
/** Accepted rows are marked in groups of this size, so the marking keeps pace with the relay. */
const MARK_EVERY = 250
/** A deferred message is tried once more after this long; deferred again, it is a soft bounce. */
const RETRY_AFTER_MS = 5 * 60_000
const IDLE_POLL_MS = 500

const DEFERRED = 'deferred: '

export interface CampaignSender {
  /** Look for work now (a campaign was just sent or resumed in this process). */
  wake(): void
  stop(): Promise<void>
  /** Runs one round over every campaign with work (tests drive the sender with this). */
  runOnce(): Promise<number>
}

const senders = new Set<CampaignSender>()

/** Wakes the senders of this process; other processes find the work on their next poll. */
export function wakeCampaignSenders(): void {
  for (const s of senders) s.wake()
}

function contentOf(ctx: Ctx, c: CampaignRow, domain: SenderDomain) {
  const content = campaignContent(ctx, c, domain)
  // Threads cache the compiled campaign under this key; the hash keeps two databases' campaign 1 apart.
  const key = `${c.id}:${createHash('sha1').update(JSON.stringify(content)).digest('base64url')}`
  return { content, key }
}

/** Coupon tags of the campaigns in hand, by content key: the content is scanned once per campaign. */
const TAGS_CACHE_SIZE = 50

const recipientOf = (r: ClaimedRecipient, coupons: Record<string, string> | undefined): CampaignRecipient => {
  const vars = contactMergeVars(r)
  // After the contact's fields: a custom field named `coupon:12` never stands in for a code.
  if (coupons) Object.assign(vars, coupons)
  return { messageId: r.id, email: r.email, name: r.recipient_name, vars }
}

/**
 * The campaign sender of one worker process: prepares campaigns, starts due schedules, and sends ledger
 * batches. Each batch is claimed (status 4, with a lease), composed and signed on threads, handed to the
 * relay, and marked as the relay accepts it; a crash leaves the claimed rows to be sent again when the
 * lease runs out, so nothing is skipped and at most one batch is sent twice.
 */
export interface SenderOptions {
  signer?: CampaignSigner
  /** False: no loop; the caller drives rounds with runOnce() (tests). */
  loop?: boolean
  batchSize?: number
}

export function startCampaignSender(ctx: Ctx, opts: SenderOptions = {}): CampaignSender {
  const signer = opts.signer ?? createCampaignSigner(ctx.config.sendThreads)
  const batchSize = opts.batchSize ?? SEND_BATCH
  const recorder = createEventRecorder(ctx)
  const cursors = new Map<number, number>()
  const tagsByKey = new Map<string, CouponTags>()
  const leaseMs = ctx.config.sendLeaseSeconds * 1000
  let stopped = false
  let wakeUp: (() => void) | undefined
  let lastScheduleCheck = 0

  const leaseEnd = () => new Date(ctx.clock.now().getTime() + leaseMs)

  async function claim(campaignId: number): Promise<ClaimedRecipient[]> {
    const cursor = cursors.get(campaignId) ?? 0
    const queued = await claimQueued(ctx.db, campaignId, cursor, batchSize, leaseEnd())
    if (queued.length) {
      cursors.set(campaignId, queued[queued.length - 1]!.id)
      return queued
    }
    const expired = await claimExpired(ctx.db, campaignId, ctx.clock.now(), batchSize, leaseEnd())
    if (expired.length) return expired
    // Rows behind the cursor can be queued again (a claim that rolled back): walk from the start.
    if (cursor > 0 && (await hasQueued(ctx.db, campaignId))) cursors.set(campaignId, 0)
    else if (await finishIfDone(ctx.db, campaignId, ctx.clock.now())) cursors.delete(campaignId)
    return []
  }

  function tagsOf(key: string, content: { subject: string; html: string; plainText: string | null }) {
    let tags = tagsByKey.get(key)
    if (!tags) {
      tags = couponTags([content.subject, content.html, content.plainText])
      if (tagsByKey.size >= TAGS_CACHE_SIZE) tagsByKey.delete(tagsByKey.keys().next().value!)
      tagsByKey.set(key, tags)
    }
    return tags
  }

  /** Sends one batch of a campaign; how many rows it claimed. */
  async function sendBatch(campaignId: number): Promise<number> {
    const rows = await claim(campaignId)
    if (rows.length === 0) return 0
    const c = await findCampaignById(ctx.db, campaignId)
    const domain =
      c && (await resolveSenderDomain(ctx, ctx.db, c.accountId, c.fromEmail, CAMPAIGN_DOMAIN_TYPES))
    if (!c || !domain?.allowed) {
      if (c && domain)
        await errorCampaign(ctx.db, c.id, campaignErrors.domainLost(domain.name), ctx.clock.now())
      await releaseClaimed(
        ctx.db,
        rows.map((r) => r.id),
      )
      return rows.length
    }
    const { content, key } = contentOf(ctx, c, domain)
    // Each recipient's codes: one statement per coupon folder for the whole batch, none without the tag.
    const coupons = await assignCouponVars(ctx, tagsOf(key, content), {
      accountId: c.accountId,
      campaignId: c.id,
      messageIds: rows.map((r) => r.id),
    })
    const byId = new Map(rows.map((r) => [r.id, r]))
    const pending = new Set(byId.keys())
    // A slow relay must not let the lease run out under a batch still being sent.
    const renewal = setInterval(
      () => {
        void renewClaim(ctx.db, [...pending], leaseEnd()).catch(() => undefined)
      },
      Math.max(1000, leaseMs / 3),
    )
    renewal.unref()

    let accepted: AcceptedRow[] = []
    let acceptedCount = 0
    const refused: { row: ClaimedRecipient; error: string }[] = []
    const deferred: { row: ClaimedRecipient; error: string }[] = []
    let marking = Promise.resolve()
    const flush = () => {
      const done = accepted
      accepted = []
      marking = marking.then(async () => {
        await ctx.db.transaction(async (tx) => {
          const sent = await markSent(tx, c.id, done, ctx.clock.now())
          await enqueueWebhookEvents(
            tx,
            sent.map((e) => ({
              accountId: e.account_id,
              messageId: e.message_id,
              campaignId: c.id,
              contactId: e.contact_id,
              email: e.email,
              event: 'send' as const,
              occurredAt: ctx.clock.now(),
            })),
          )
        })
      })
    }

    try {
      const chunks: ClaimedRecipient[][] = []
      for (let i = 0; i < rows.length; i += SIGN_CHUNK) chunks.push(rows.slice(i, i + SIGN_CHUNK))
      await Promise.all(
        chunks.map(async (chunk) => {
          const recipients = chunk.map((r) => recipientOf(r, coupons.get(r.id)))
          const signed = await signer.sign({ key, content, recipients })
          await Promise.all(
            signed.map(async (m) => {
              const row = byId.get(m.messageId)!
              try {
                const result = await ctx.mailer.sendRaw(
                  m.envelope,
                  Buffer.from(m.raw.buffer, m.raw.byteOffset, m.raw.byteLength),
                  m.smtpMessageId,
                )
                if (result.rejected.length > 0) {
                  refused.push({ row, error: `recipient refused: ${result.rejected.join(', ')}` })
                } else {
                  accepted.push({ id: row.id, smtpMessageId: result.messageId })
                  acceptedCount++
                  if (accepted.length >= MARK_EVERY) flush()
                }
              } catch (err) {
                const failure = smtpFailure(err)
                ;(failure.outcome === 'hard_bounce' ? refused : deferred).push({ row, error: failure.error })
              }
              pending.delete(row.id)
            }),
          )
        }),
      )
      flush()
      await marking
      await settleFailures(c, refused, deferred)
      if (acceptedCount === 0 && !(await anyAccepted(ctx.db, c.id))) {
        const last = refused[0]?.error ?? deferred[0]?.error ?? 'no reply'
        await errorCampaign(ctx.db, c.id, campaignErrors.relayRefusedAll(last), ctx.clock.now())
      }
    } finally {
      clearInterval(renewal)
    }
    return rows.length
  }

  async function settleFailures(
    c: CampaignRow,
    refused: { row: ClaimedRecipient; error: string }[],
    deferred: { row: ClaimedRecipient; error: string }[],
  ) {
    const ref = (r: ClaimedRecipient) => ({
      id: r.id,
      accountId: c.accountId,
      campaignId: c.id,
      pipelineId: null,
      actionId: null,
      contactId: r.contact_id,
      email: r.email,
    })
    for (const { row, error } of refused) {
      await ctx.db.transaction(async (tx) => {
        await markRefused(tx, row.id, error, ctx.clock.now())
        await recorder.bounced(tx, ref(row), 'hard', error)
      })
    }
    const retry: number[] = []
    for (const { row, error } of deferred) {
      if (row.error?.startsWith(DEFERRED)) await recordSoftFailure(ctx, ref(row), error)
      else retry.push(row.id)
    }
    const firstError = deferred.find((d) => retry.includes(d.row.id))?.error ?? ''
    await deferClaimed(
      ctx.db,
      retry,
      `${DEFERRED}${firstError}`,
      new Date(ctx.clock.now().getTime() + RETRY_AFTER_MS),
    )
  }

  /**
   * Runs one step of a campaign; an unexpected failure errors the campaign (`internal`) rather than being
   * retried on every round: the owner sees why it stopped and resumes it once the cause is fixed. Rows the
   * step had claimed stay claimed until their lease runs out, so none is sent twice.
   */
  async function guarded(campaignId: number, step: () => Promise<number>): Promise<number> {
    try {
      return await step()
    } catch (err) {
      ctx.log.error({ err, campaignId }, 'campaign stopped on an unexpected error')
      await errorCampaign(ctx.db, campaignId, campaignErrors.internal(), ctx.clock.now()).catch(
        (e: unknown) => ctx.log.error({ err: e, campaignId }, 'could not mark the campaign errored'),
      )
      return 0
    }
  }

  async function runOnce(): Promise<number> {
    const now = ctx.clock.now().getTime()
    if (now - lastScheduleCheck >= 1000) {
      lastScheduleCheck = now
      await startDueScheduled(ctx.db, ctx.clock.now())
    }
    for (const id of await preparingCampaignIds(ctx.db))
      await guarded(id, async () => ((await prepareCampaign(ctx, id)) ? 1 : 0))
    let claimed = 0
    for (const id of await sendingCampaignIds(ctx.db)) {
      if (stopped) break
      claimed += await guarded(id, () => sendBatch(id))
    }
    return claimed
  }

  const loop = (async () => {
    // Bounded by `stopped`: the process's shutdown ends it after the batch in hand.
    while (!stopped && opts.loop !== false) {
      let worked = 0
      try {
        worked = await runOnce()
      } catch (err) {
        ctx.log.error({ err }, 'campaign sender')
      }
      if (worked === 0 && !stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, IDLE_POLL_MS)
          wakeUp = () => {
            clearTimeout(timer)
            resolve()
          }
        })
        wakeUp = undefined
      }
    }
  })()

  const sender: CampaignSender = {
    wake: () => wakeUp?.(),
    async stop() {
      stopped = true
      wakeUp?.()
      await loop
      senders.delete(sender)
      await signer.close()
    },
    runOnce,
  }
  senders.add(sender)
  return sender
}
