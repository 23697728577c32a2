import { performance } from 'node:perf_hooks'
import type { SQL } from 'drizzle-orm'
import type { AppContext } from '../../core/context.js'
import type { DbHandle, Executor } from '../../core/db/client.js'
import { coalescedNotifier, type Listening } from '../../core/db/notifications.js'
import type { MergeValue } from '../../core/mail/merge-tags.js'
import type { BodyContent, BodyRecipient } from './body-render.js'
import { bodyContent, bodyRecipient, bodyTemplates } from './body-content.js'
import { findBodies } from './bodies.repo.js'
import { startClaimer } from './claimer.js'
import { bodyContentKey, contentKey } from './content-key.js'
import {
  claimExpired,
  claimQueued,
  deferClaimed,
  hasQueued,
  markSent,
  releaseClaimed,
  renewClaim,
  type AcceptedRow,
  type ClaimScope,
  type ClaimedRow,
  type SentEvent,
} from './ledger.repo.js'
import type { CampaignContent, CampaignRecipient } from './render.js'
import type { BodySlice, SignTask } from './sign.worker.js'
import type { SignQueueOptions } from './sign-queue.js'
import { createMailSigner, type MailSigner } from './signer.js'
import { testCopyContent, testCopyRecipient } from './test-copies.js'
import { providedVars, providerTags, type ProviderTags } from './vars-providers.js'
import { retriedTransaction } from '../../core/db/retry.js'
import { isTransientDatabaseError } from '../../core/db/errors.js'
import { logRoundFailure } from '../../core/round-failure.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'config' | 'mailer' | 'linkSecret' | 'log'>

/** Rows one sender has claimed at a time, over its lanes: the most a crash can send twice. */
export const SEND_BATCH = 500
/**
 * Rounds a sender's loop runs side by side, each claiming its share of SEND_BATCH. With one, the signing
 * threads sat idle while a batch's last messages were relayed and marked and the next batch was claimed (about
 * a tenth of a send's time on two cores); with two, one lane's batch keeps them busy meanwhile.
 */
const LANES = 2
/** Recipients per signing task: big enough to amortise the hop to a thread, small enough to keep both busy. */
const SIGN_CHUNK = 50
/** Accepted rows are marked in groups of this size, so the marking keeps pace with the relay. */
const MARK_EVERY = 250
/** A deferred message is tried once more after this long; deferred again, it is a soft bounce. */
const RETRY_AFTER_MS = 5 * 60_000
/**
 * Messages the relay itself failed (SendOutcomes.classify) are tried again after this long, for as long as it
 * fails, with no bounce; a lane whose whole batch failed so rests as long, rather than signing the rest of the
 * queue only to fail it.
 */
export const RELAY_RETRY_MS = 60_000
const IDLE_POLL_MS = 500
/**
 * A scope's claims look for freed rows before queued ones at most this often (and at its first claim): one
 * statement a second per scope and sender, found by the campaign's own index, against a dozen claims a second.
 */
const FREED_FIRST_MS = 1_000
/** Contents (and their providers' tags) kept per process, by content key. */
const TAGS_CACHE_SIZE = 50
/** Body mail (transactional, confirmations, automation mail, test copies) is signed first: sign-queue.ts. */
const BODY_QUEUE: SignQueueOptions = { ahead: true }

const DEFERRED = 'deferred: '
const RELAY_FAILED = 'relay failed: '

/**
 * What the sender needs of campaigns, which own their rows, statuses and errors (the campaigns module
 * implements it; the module list passes it in, so this module never imports campaigns).
 */
export interface CampaignOrigin {
  /** Starts due schedules and freezes the recipients of campaigns waiting in "preparing"; once per round. */
  prepare(ctx: Ctx, help?: PreparingHelp): Promise<void>
  /** Sending, unpaused campaigns, oldest first. */
  sendingIds(ex: Executor): Promise<number[]>
  /** The condition under which a campaign's rows may be claimed now (sending, not paused), as SQL. */
  sendable(campaignId: number): SQL
  /** What a batch of the campaign is sent with; undefined when it cannot send now (it recorded why). */
  content(ctx: Ctx, campaignId: number): Promise<{ accountId: number; content: CampaignContent } | undefined>
  /** A campaign with nothing queued or claimed left is done; true when this call finished it. */
  finishIfDone(ex: Executor, campaignId: number, now: Date): Promise<boolean>
  /** A batch of which the relay accepted nothing; the campaign stops when it never accepted any. */
  nothingAccepted(ctx: Ctx, campaignId: number, lastError: string): Promise<void>
  /** An unexpected failure: the campaign stops (`internal`) rather than being retried on every round. */
  failed(ctx: Ctx, campaignId: number): Promise<void>
  /** A claimed row's merge values from its contact's columns. */
  mergeVars(row: ClaimedRow): Record<string, MergeValue>
}

/** What the sender lends a round's preparation of campaigns: its signing threads. */
export interface PreparingHelp {
  /** Called before the first campaign of the round is frozen (the threads start meanwhile). */
  starting(): void
  /**
   * A campaign's trackable links by index (render.ts, trackableHtml), on a signing thread. Absent without
   * threads: the campaign finds them itself then.
   */
  links?(content: Pick<CampaignContent, 'html' | 'publicUrl'>): Promise<string[]>
}

/** A ledger row as the recorders of what happened to it take it. */
export interface MessageRef {
  id: number
  accountId: number
  campaignId: number
  pipelineId: number | null
  actionId: string | null
  contactId: number | null
  email: string
  /** The subject as sent, when it differs per recipient (kept on the row as markSent keeps it). */
  subject?: string | undefined
}

/**
 * What the sender records about the relay's answers. Events, counters, suppression and webhooks sit in modules
 * that (through subscribers) import this one, so the module list passes them in rather than this module
 * importing them.
 */
export interface SendOutcomes {
  /**
   * Of these accounts, those that take `send` events (an enabled webhook). Only their events come back from
   * the marking statement to go to `sent`: for an account without one, reading a batch's events back would
   * only feed an outbox statement that writes nothing.
   */
  sentWanted(ex: Executor, accountIds: readonly number[]): Promise<number[]>
  /** The `send` events of rows just marked sent, for the webhook outbox, in the marking transaction. */
  sent(tx: Executor, events: SentEvent[], now: Date): Promise<void>
  /** The relay refused the message for good: the row refused (2) and its hard bounce, in one transaction. */
  refused(ctx: Ctx, message: MessageRef, error: string): Promise<void>
  /** Deferred again on its retry: a soft bounce. */
  softBounce(ctx: Ctx, message: MessageRef, error: string): Promise<void>
  /**
   * What a failed hand-over means: a permanent refusal (hard bounce), one to retry later (a soft bounce if it
   * comes again), or a failure of the relay itself (no bounce; tried again until the relay takes it).
   */
  classify(err: unknown): { outcome: 'hard_bounce' | 'retry' | 'relay'; error: string }
  /** A row that cannot be sent at all (its body is gone): refused without a bounce. */
  unsendable(ctx: Ctx, id: number, error: string): Promise<void>
}

export interface Sender {
  /** Look for work now (mail was just queued in this process). */
  wake(): void
  /**
   * Settles once the sender listens for mail queued by processes without a sender (MAIL_QUEUED_CHANNEL), or its
   * first try failed (it tries again on its own); at once without a loop.
   */
  readonly listening: Promise<void>
  stop(): Promise<void>
  /** Runs one round over every origin with work (tests drive the sender with this). */
  runOnce(): Promise<number>
}

const senders = new Set<Sender>()
/** The channel on which a process without a sender (ROLE=api) tells the workers that it queued mail. */
export const MAIL_QUEUED_CHANNEL = 'tidings_mail_queued'
/**
 * An API process announces at most one batch of queued mail this often: a busy intake costs the database a
 * hundred tiny statements a second at most, and a mail waits at most this much longer than the workers' wake.
 */
const ANNOUNCE_GAP_MS = 10
const announcers = new WeakMap<DbHandle, () => void>()

/**
 * Mail was queued and committed: the senders of this process look for it now. A process without one (ROLE=api)
 * tells the workers over the database instead (MAIL_QUEUED_CHANNEL), so they need not wait for their idle poll;
 * where the notification is not heard (a pooler), the poll still finds the mail.
 */
export function wakeSenders(ctx: Pick<AppContext, 'dbHandle'>): void {
  if (senders.size > 0) {
    for (const s of senders) s.wake()
    return
  }
  let announce = announcers.get(ctx.dbHandle)
  if (!announce) {
    const handle = ctx.dbHandle
    announce = coalescedNotifier(() => handle.notify(MAIL_QUEUED_CHANNEL), ANNOUNCE_GAP_MS)
    announcers.set(handle, announce)
  }
  announce()
}

export interface SenderOptions {
  signer?: MailSigner
  /** False: no loop; the caller drives rounds with runOnce() (tests). */
  loop?: boolean
  /** How long an idle loop waits before it looks again unwoken (tests lengthen it to see a wake work). */
  idlePollMs?: number
  batchSize?: number
  /** Campaign mail; without it the sender sends only mail with a body row. */
  campaigns?: CampaignOrigin
  outcomes: SendOutcomes
}

/** One of the sender loop's side-by-side rounds (LANES). */
interface Lane {
  batchSize: number
  /** This round may have left claimable rows behind: a campaign sent a batch, or a body claim came back full. */
  more: boolean
  /** Mail was queued in this process since the round began. */
  woken: boolean
  /** The relay itself failed a batch of this round and accepted nothing of it: rest before the next. */
  relayDown?: boolean
  /** The rows of the batch in hand, from their claim until the batch ends (in `inHand` meanwhile). */
  claimed?: number[]
}

interface Failure {
  row: ClaimedRow
  error: string
  /** The subject as rendered for this recipient (SignedMessage.subject), for the bounce's event and webhook. */
  subject?: string | undefined
}

/**
 * The one sender of a worker process, for every kind of mail. Each batch is claimed from the ledger (status 4,
 * with a lease), composed and signed on threads, handed to the relay, and marked as the relay accepts it
 * (one statement per group, with the `send` events and counters); a crash leaves the claimed rows to be sent
 * again as soon as the dead sender's lock is free (claimer.ts), or else when the lease runs out, so nothing is
 * skipped and at most the batches in hand are sent twice.
 *
 * Fair share: a round sends one batch of mail with a body row (transactional, confirmation, automation,
 * campaign test copies, oldest first) before each sending campaign's batch, and one more when no campaign sends. However big a
 * campaign is, a transactional message waits behind at most one campaign batch per sending campaign.
 */
export function startSender(ctx: Ctx, opts: SenderOptions): Sender {
  const signer = opts.signer ?? createMailSigner(ctx.config.sendThreads)
  const batchSize = opts.batchSize ?? SEND_BATCH
  const idlePollMs = opts.idlePollMs ?? IDLE_POLL_MS
  const campaigns = opts.campaigns
  const outcomes = opts.outcomes
  /**
   * What this sender keeps per scope, by campaign id (0: mail with a body row): the cursor its queued claims walk
   * forward from, when it last looked for freed rows before queued ones (FREED_FIRST_MS; a monotonic clock,
   * not the app's: this paces statements, it is no wait of the domain), and whether a lane is making sure the
   * campaign is done (sendCampaignBatch).
   */
  const scopes = new Map<number, { cursor: number; freedLookAt: number; ending?: boolean }>()
  const campaignIdOf = (scope: ClaimScope) => ('bodies' in scope ? 0 : scope.campaignId)
  const tagsByKey = new Map<string, ProviderTags>()
  const leaseMs = ctx.config.sendLeaseSeconds * 1000
  let stopped = false
  /** Resolvers of the lanes waiting for work. */
  const waiting = new Set<() => void>()
  /** Resolvers of the lanes resting after the relay failed them. */
  const resting = new Set<() => void>()
  /**
   * Rows a lane of this sender holds, from their claim until its batch ends. Another lane that finds one of
   * them expired (a renewal held up behind a busy database) or under a lost lock (claimer.ts) leaves it to the
   * lane that has it, which may have handed it to the relay already. By id, with its campaign (0 for mail with
   * a body row).
   */
  const inHand = new Map<number, number>()

  const leaseEnd = () => new Date(ctx.clock.now().getTime() + leaseMs)
  // A killed sender's rows go out as soon as its lock is free, not a lease later (claimer.ts).
  const claimer = startClaimer(ctx.dbHandle, {
    // DB_PREPARED_STATEMENTS=0 is said to mean a pooler (README): no lock, and no warning that finds one.
    enabled: ctx.config.sendClaimLocks && (ctx.dbHandle.kind === 'pglite' || ctx.config.dbPreparedStatements),
    onError: (err) =>
      ctx.log.warn({ err }, 'no sender lock: after a crash, its claimed mail waits the lease'),
    onPooled: () =>
      ctx.log.warn(
        'something stands between this worker and PostgreSQL (a pooler, a NAT): no sender lock, so after a ' +
          'crash its claimed mail waits the lease (SEND_CLAIM_LOCKS=0 says so without this warning)',
      ),
    onLost: () =>
      ctx.log.warn(
        'this sender’s lock was lost (PostgreSQL restarted? its connection cut?): taking it again',
      ),
  })

  /** Claims a batch for `lane`, whose rows stay in `inHand` until the batch ends (endBatch). */
  async function claim(lane: Lane, scope: ClaimScope): Promise<ClaimedRow[]> {
    const rows = await claimRows(lane.batchSize, scope)
    const campaignId = campaignIdOf(scope)
    for (const r of rows) inHand.set(r.id, campaignId)
    lane.claimed = rows.map((r) => r.id)
    return rows
  }

  /** Side effect: the lane's batch ended, however: its rows are this sender's no more (sent, settled or left). */
  function endBatch(lane: Lane) {
    for (const id of lane.claimed ?? []) inHand.delete(id)
    lane.claimed = undefined
  }

  /**
   * After a claim that found nothing: rows behind the cursor can be queued again (a claim that rolled back), and
   * then the next claim walks from the start.
   */
  async function rewindIfQueued(scope: ClaimScope): Promise<boolean> {
    const state = scopes.get(campaignIdOf(scope))
    if (!state || state.cursor === 0 || !(await hasQueued(ctx.db, scope))) return false
    state.cursor = 0
    return true
  }

  /** Claims queued rows, and freed ones; none found, the caller may rewind (rewindIfQueued). */
  async function claimRows(limit: number, scope: ClaimScope): Promise<ClaimedRow[]> {
    const campaignId = campaignIdOf(scope)
    let state = scopes.get(campaignId)
    if (!state) scopes.set(campaignId, (state = { cursor: 0, freedLookAt: -Infinity }))
    const by = await claimer.current()
    const freed = () => {
      // Only the held rows this scope could claim: a campaign's in the bodies lane would ride along for nothing.
      const held = [...inHand].filter(([, c]) => c === campaignId).map(([id]) => id)
      return claimExpired(ctx.dbHandle, scope, ctx.clock.now(), limit, leaseEnd(), held, by)
    }
    // Rows freed (a dead sender's, a deferral's whose time came) are also looked for before queued ones, about
    // once a second: else they waited until nothing was queued, which under steady transactional traffic could be
    // as long as the traffic lasted, and for a campaign its whole send. Queued rows fill the rest of the batch,
    // so a look that finds a few costs no round.
    let first: ClaimedRow[] = []
    const now = performance.now()
    const looked = now - state.freedLookAt >= FREED_FIRST_MS
    // Body rows come from concurrent transactions (calls, automation steps) that commit out of id order, so one
    // may become visible behind the cursor. Only an empty claim rewound it, which steady traffic may not give for
    // as long as it lasts: beside a campaign, with a shop's orders coming in, such rows waited 1 to 5 s (bench).
    // So the same look walks body rows from the start. A campaign's rows are frozen in one statement.
    const cursor = looked && 'bodies' in scope ? 0 : state.cursor
    if (looked) {
      state.freedLookAt = now
      first = await freed()
      if (first.length >= limit) return first
    }
    const queued = await claimQueued(ctx.dbHandle, scope, cursor, limit - first.length, leaseEnd(), by)
    if (queued.length) {
      // Lanes claim side by side: the cursor only moves on (rows below it are taken or skipped anyway).
      state.cursor = Math.max(state.cursor, queued[queued.length - 1]!.id)
      return first.length ? [...first, ...queued] : queued
    }
    if (first.length) return first
    // Nothing queued: freed rows are looked for now, unless they just were.
    return looked ? [] : freed()
  }

  function tagsOf(key: string, sources: (string | null)[]) {
    let tags = tagsByKey.get(key)
    if (!tags) {
      tags = providerTags(sources)
      if (tagsByKey.size >= TAGS_CACHE_SIZE) tagsByKey.delete(tagsByKey.keys().next().value!)
      tagsByKey.set(key, tags)
    }
    return tags
  }

  /**
   * Signs the tasks on threads (queued as `queue` says), hands each message to the relay and marks the accepted
   * ones in groups; settles refusals and deferrals. How many the relay accepted, and the last error.
   */
  async function relay(rows: ClaimedRow[], tasks: SignTask[], queue?: SignQueueOptions) {
    const byId = new Map(rows.map((r) => [r.id, r]))
    // The lease must not run out under any row of the batch until it is marked, sent ones included: a message
    // handed to the relay whose claim expired before its marking would be claimed again (by this sender's
    // other lane, or another worker) and sent twice. Marked rows (status 1) are no longer touched.
    const held = [...byId.keys()]
    let renewing: Promise<void> = Promise.resolve()
    const renewal = setInterval(
      () => {
        renewing = renewClaim(ctx.db, held, leaseEnd()).catch(() => undefined)
      },
      Math.max(1000, leaseMs / 3),
    )
    renewal.unref()

    let accepted: AcceptedRow[] = []
    let acceptedCount = 0
    const refused: Failure[] = []
    const deferred: Failure[] = []
    const relayFailed: Failure[] = []
    let marking = Promise.resolve()
    const flush = () => {
      const done = accepted
      accepted = []
      marking = marking.then(async () => {
        const now = ctx.clock.now()
        const accounts = [...new Set(done.map((a) => byId.get(a.id)!.account_id))]
        const wanted = await outcomes.sentWanted(ctx.db, accounts)
        // Without a webhook to tell, the marking is one statement: nothing else to write with it.
        if (wanted.length === 0) return void (await markSent(ctx.dbHandle, done, now, []))
        await retriedTransaction(ctx.db, async (tx) => {
          await outcomes.sent(tx, await markSent(tx, done, now, wanted), now)
        })
      })
    }

    try {
      await Promise.all(
        tasks.map(async (task) => {
          const signed = await signer.sign(task, queue)
          await Promise.all(
            signed.map(async (m) => {
              const row = byId.get(m.messageId)!
              try {
                const result = await ctx.mailer.sendRaw(
                  m.envelope,
                  Buffer.from(m.raw.buffer, m.raw.byteOffset, m.raw.byteLength),
                  m.smtpMessageId,
                  { dataSafe: m.dataSafe },
                )
                // The message is about its own recipient: an accepted cc does not make a refused `to` sent.
                const own = row.email.toLowerCase()
                if (result.rejected.some((a) => a.toLowerCase() === own)) {
                  refused.push({
                    row,
                    error: `recipient refused: ${result.rejected.join(', ')}`,
                    subject: m.subject,
                  })
                } else {
                  accepted.push({ id: row.id, smtpMessageId: result.messageId, subject: m.subject })
                  acceptedCount++
                  if (accepted.length >= MARK_EVERY) flush()
                }
              } catch (err) {
                const failure = outcomes.classify(err)
                const to = { hard_bounce: refused, retry: deferred, relay: relayFailed }[failure.outcome]
                to.push({ row, error: failure.error, subject: m.subject })
              }
            }),
          )
          // Every message of the task settled: its bytes go back to a signing thread (signer.ts, release).
          signer.release?.(signed)
        }),
      )
      flush()
      await marking
    } finally {
      clearInterval(renewal)
      // A renewal still in flight would otherwise overwrite a deferred row's retry time below.
      await renewing
    }
    await settleFailures(refused, deferred, relayFailed)
    const lastError = refused[0]?.error ?? deferred[0]?.error ?? relayFailed[0]?.error ?? 'no reply'
    return { acceptedCount, lastError, relayDown: acceptedCount === 0 && relayFailed.length > 0 }
  }

  const refOf = (r: ClaimedRow, subject?: string): MessageRef => ({
    subject,
    id: r.id,
    accountId: r.account_id,
    campaignId: r.campaign_id,
    pipelineId: r.pipeline_id,
    actionId: r.action_id,
    contactId: r.contact_id,
    email: r.email,
  })

  async function settleFailures(refused: Failure[], deferred: Failure[], relayFailed: Failure[]) {
    if (relayFailed.length) {
      const error = relayFailed[0]!.error
      // The operator's to see (a wrong password, a relay down): the mail waits for the relay, nobody bounces.
      ctx.log.warn(
        { messages: relayFailed.length, error },
        `the SMTP relay failed; these messages are tried again in ${RELAY_RETRY_MS / 1000} s`,
      )
      const now = ctx.clock.now()
      const giveUpHours = ctx.config.relayGiveUpHours
      const givenUp = await deferClaimed(
        ctx.db,
        relayFailed.map((f) => f.row.id),
        `${RELAY_FAILED}${error}`,
        new Date(now.getTime() + RELAY_RETRY_MS),
        giveUpHours > 0 ? { before: new Date(now.getTime() - giveUpHours * 3_600_000), now } : undefined,
      )
      if (givenUp > 0)
        ctx.log.error(
          { messages: givenUp, error, hours: giveUpHours },
          'messages queued longer than RELAY_GIVE_UP_HOURS were given up: the SMTP relay failed them all along',
        )
    }
    for (const { row, error, subject } of refused) await outcomes.refused(ctx, refOf(row, subject), error)
    const retry: number[] = []
    for (const { row, error, subject } of deferred) {
      if (row.error?.startsWith(DEFERRED)) await outcomes.softBounce(ctx, refOf(row, subject), error)
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

  const chunked = <T>(items: T[]): T[][] => {
    const out: T[][] = []
    for (let i = 0; i < items.length; i += SIGN_CHUNK) out.push(items.slice(i, i + SIGN_CHUNK))
    return out
  }

  /** Sends one batch of a campaign; how many rows it claimed. */
  async function sendCampaignBatch(lane: Lane, origin: CampaignOrigin, campaignId: number): Promise<number> {
    if (scopes.get(campaignId)?.ending) return 0
    const scope = { campaignId, sendable: origin.sendable(campaignId) }
    const rows = await claim(lane, scope)
    if (rows.length === 0) {
      // Whether the campaign is done is read from its whole ledger in the index, every row's claimed and sent
      // versions included until a vacuum: 2.3 and 3.3 s at 1,000,000 recipients (logged, each statement run by
      // both lanes at once), while body mail, sent by the lanes between campaign batches, waited for them. One
      // lane reads it; the other goes on with body mail meanwhile.
      const state = scopes.get(campaignId)
      if (!state || state.ending) return 0
      state.ending = true
      try {
        if (await rewindIfQueued(scope)) return 0
        if (await origin.finishIfDone(ctx.db, campaignId, ctx.clock.now())) scopes.delete(campaignId)
      } finally {
        state.ending = false
      }
      return 0
    }
    const found = await origin.content(ctx, campaignId)
    if (!found) {
      await releaseClaimed(
        ctx.db,
        rows.map((r) => r.id),
      )
      return rows.length
    }
    const { content, accountId } = found
    const key = contentKey(`${campaignId}`, content)
    // Each recipient's provided values (coupon codes): one statement per provider for the whole batch.
    const provided = await providedVars(
      ctx,
      tagsOf(key, [content.subject, content.html, content.plainText]),
      {
        accountId,
        campaignId,
        messageIds: rows.map((r) => r.id),
        recipients: rows.map((r) => ({ messageId: r.id, email: r.email })),
      },
    )
    const recipientOf = (r: ClaimedRow): CampaignRecipient => {
      const vars = origin.mergeVars(r)
      // After the contact's fields: a custom field named `coupon:12` never stands in for a code.
      const extra = provided.get(r.id)
      if (extra) Object.assign(vars, extra)
      return { messageId: r.id, email: r.email, name: r.recipient_name, vars }
    }
    const tasks: SignTask[] = chunked(rows).map((chunk) => ({
      kind: 'campaign',
      key,
      content,
      recipients: chunk.map(recipientOf),
    }))
    const { acceptedCount, lastError, relayDown } = await relay(rows, tasks)
    if (relayDown) lane.relayDown = true
    if (acceptedCount === 0) await origin.nothingAccepted(ctx, campaignId, lastError)
    return rows.length
  }

  /** Sends one batch of mail with body rows (any number of bodies); how many rows it claimed. */
  async function sendBodyBatch(lane: Lane): Promise<number> {
    const scope = { bodies: true } as const
    const rows = await claim(lane, scope)
    if (rows.length >= lane.batchSize) lane.more = true
    if (rows.length === 0) {
      await rewindIfQueued(scope)
      return 0
    }
    const byBody = new Map<number, ClaimedRow[]>()
    for (const r of rows) {
      const list = byBody.get(r.batch_id!)
      if (list) list.push(r)
      else byBody.set(r.batch_id!, [r])
    }
    const tasks: SignTask[] = []
    // Body rows' recipients, gathered into tasks of up to SIGN_CHUNK messages across rows.
    let slices: BodySlice[] = []
    let sliced = 0
    const addSlice = (slice: BodySlice) => {
      slices.push(slice)
      sliced += slice.recipients.length
      if (sliced >= SIGN_CHUNK) {
        tasks.push({ kind: 'body', slices })
        slices = []
        sliced = 0
      }
    }
    const missing: ClaimedRow[] = []
    const contents = new Map<string, BodyContent>()
    const bodies = await findBodies(ctx.db, [...byBody.keys()])
    for (const [bodyId, group] of byBody) {
      const body = bodies.get(bodyId)
      if (!body) {
        missing.push(...group)
        continue
      }
      if (body.kind === 'test') {
        // A campaign's test copies: rendered as the campaign's mail, with the values fixed when queued, and
        // the providers whose values a test may show for real (recommendations).
        const content = await testCopyContent(ctx, body)
        const key = contentKey(`b${bodyId}`, content)
        const provided = await providedVars(
          ctx,
          tagsOf(key, [content.subject, content.html, content.plainText]),
          {
            accountId: body.accountId,
            campaignId: 0,
            messageIds: group.map((r) => r.id),
            recipients: group.map((r) => ({ messageId: r.id, email: r.email })),
          },
          { testCopies: true },
        )
        for (const chunk of chunked(group))
          tasks.push({
            kind: 'campaign',
            key,
            content,
            recipients: chunk.map((r) => testCopyRecipient(r, provided.get(r.id))),
          })
        continue
      }
      const made = await bodyContent(ctx, body)
      const key = bodyContentKey(made)
      // One object per content: a task's slices that share it cross to the thread with one copy of it (a
      // structured clone writes an object it has written already as a reference), not one per body row, each
      // with the HTML and the DKIM key, as when a shop's calls of one template were each a row of their own.
      const content = contents.get(key) ?? made
      contents.set(key, content)
      const provided = await providedVars(ctx, tagsOf(key, bodyTemplates(body)), {
        accountId: body.accountId,
        campaignId: 0,
        messageIds: group.map((r) => r.id),
        recipients: group.map((r) => ({ messageId: r.id, email: r.email })),
      })
      const recipientOf = (r: ClaimedRow): BodyRecipient =>
        bodyRecipient(
          body,
          { id: r.id, email: r.email, recipientName: r.recipient_name, vars: r.vars },
          provided.get(r.id),
        )
      for (const chunk of chunked(group)) addSlice({ key, content, recipients: chunk.map(recipientOf) })
    }
    if (slices.length) tasks.push({ kind: 'body', slices })
    for (const r of missing) await outcomes.unsendable(ctx, r.id, 'the mail body is gone')
    if (tasks.length && (await relay(rows, tasks, BODY_QUEUE)).relayDown) lane.relayDown = true
    return rows.length
  }

  async function guardedCampaign(lane: Lane, origin: CampaignOrigin, campaignId: number): Promise<number> {
    try {
      return await sendCampaignBatch(lane, origin, campaignId)
    } catch (err) {
      // Rows the step had claimed stay claimed until their lease runs out; those the relay took meanwhile go
      // again then (the batch in flight, at most twice, as after a crash).
      if (isTransientDatabaseError(err)) {
        // A database restarted, failed over or cut this worker's connection: the next round goes on. Stopping
        // the campaign would leave it for someone to notice and resume.
        ctx.log.warn({ err, campaignId }, 'campaign batch failed: the database was unavailable; trying again')
        return 0
      }
      ctx.log.error({ err, campaignId }, 'campaign stopped on an unexpected error')
      await origin
        .failed(ctx, campaignId)
        .catch((e: unknown) => ctx.log.error({ err: e, campaignId }, 'could not mark the campaign errored'))
      return 0
    } finally {
      endBatch(lane)
    }
  }

  async function guardedBodies(lane: Lane): Promise<number> {
    try {
      return await sendBodyBatch(lane)
    } catch (err) {
      // The claimed rows are tried again once their lease runs out.
      logRoundFailure(ctx.log, err, 'sending mail with a body row failed')
      return 0
    } finally {
      endBatch(lane)
    }
  }

  const preparingHelp: PreparingHelp = {
    // The signing threads start while a campaign's recipients are frozen, not with its first batch.
    starting: () => void signer.warm?.(),
    links: signer.links,
  }

  async function runOnce(lane: Lane): Promise<number> {
    if (campaigns) await campaigns.prepare(ctx, preparingHelp)
    let claimed = 0
    const ids = campaigns ? await campaigns.sendingIds(ctx.db) : []
    // A campaign another worker finished leaves its scope behind here: kept no longer than it sends.
    const sending = new Set(ids)
    for (const id of scopes.keys()) if (id !== 0 && !sending.has(id)) scopes.delete(id)
    for (const id of ids) {
      if (stopped) break
      claimed += await guardedBodies(lane)
      const sent = await guardedCampaign(lane, campaigns!, id)
      // A campaign's next round also finishes it once it has nothing left: go on at once, as before.
      if (sent > 0) lane.more = true
      claimed += sent
    }
    if (!stopped) claimed += await guardedBodies(lane)
    return claimed
  }

  /** Waits `ms`, or until its resolver, put in `resolvers` meanwhile, is called (a wake, the shutdown). */
  const pause = (ms: number, resolvers: Set<() => void>) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        resolvers.delete(done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      resolvers.add(done)
    })

  const runLane = async (lane: Lane) => {
    // Bounded by `stopped`: the process's shutdown ends it after the batch in hand.
    while (!stopped) {
      lane.woken = false
      lane.more = false
      lane.relayDown = false
      try {
        await runOnce(lane)
      } catch (err) {
        logRoundFailure(ctx.log, err, 'sender')
      }
      if (lane.relayDown && !stopped) {
        // Only the shutdown ends the rest early: new mail would meet the same relay.
        await pause(RELAY_RETRY_MS, resting)
        continue
      }
      // A body claim that came back short took every queued row: another round at once would only claim
      // nothing (five statements per message under a trickle). Mail queued since wakes the loop (`woken`, also
      // when it was committed after this round's claims); rows whose lease ran out wait for the poll.
      if (!lane.more && !stopped && !lane.woken) await pause(idlePollMs, waiting)
    }
  }
  const lanes: Lane[] =
    opts.loop === false
      ? []
      : Array.from({ length: LANES }, () => ({
          batchSize: Math.ceil(batchSize / LANES),
          more: false,
          woken: false,
        }))
  const loop = Promise.all(lanes.map(runLane))

  const wakeAll = () => {
    for (const lane of lanes) lane.woken = true
    for (const done of [...waiting]) done()
  }
  // Mail queued by an API process wakes the loop at once; without this it waited for the idle poll.
  const listening: Promise<Listening | undefined> =
    opts.loop === false
      ? Promise.resolve(undefined)
      : ctx.dbHandle
          .listen(MAIL_QUEUED_CHANNEL, wakeAll, (err) =>
            // Expected in a failover or a restart, and mended on its own: the reason, without a stack trace.
            ctx.log.warn(
              { reason: err instanceof Error ? err.message : String(err) },
              'not hearing of mail queued elsewhere for now: the idle poll finds it',
            ),
          )
          .catch((err: unknown) => {
            ctx.log.warn({ err }, 'not hearing of mail queued elsewhere: the idle poll finds it')
            return undefined
          })
  const sender: Sender = {
    wake: wakeAll,
    listening: listening.then(() => undefined),
    async stop() {
      stopped = true
      wakeAll()
      for (const done of [...resting]) done()
      await (await listening)?.close()
      await loop
      senders.delete(sender)
      await Promise.all([signer.close(), claimer.release()])
    },
    // Tests drive one round at a time, over the whole batch size.
    runOnce: () => runOnce({ batchSize, more: false, woken: false }),
  }
  senders.add(sender)
  return sender
}
