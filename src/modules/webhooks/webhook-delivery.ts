import { setMaxListeners } from 'node:events'
import type { AppContext } from '../../core/context.js'
import { createOutboundHttp, OutboundError, type OutboundHttp } from '../../core/net/outbound.js'
import {
  claimDueBatches,
  deleteBatch,
  formBatches,
  rescheduleBatch,
  type ClaimedBatch,
} from './webhook-batches.repo.js'
import { nextAttemptAt, retryAfterMs } from './retry-schedule.js'
import { deliveryHeaders } from './webhook-signature.js'
import { disableWebhook, dropPending } from './webhooks.repo.js'
import { retriedTransaction } from '../../core/db/retry.js'
import { logRoundFailure } from '../../core/round-failure.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'log' | 'config'>

export interface DelivererOptions {
  /** Per request (contract §9: 10 s). */
  timeoutMs?: number
  /** How often the loop looks for work when there was none. */
  pollMs?: number
  /** Requests in flight at once, over all receivers. */
  maxInFlight?: number
  /** Events per POST. */
  perBatch?: number
  /** Jitter source, [0, 1). */
  random?: () => number
  /** The client; by default the SSRF-guarded one under ALLOW_PRIVATE_NETWORK. */
  http?: OutboundHttp
}

export interface RoundReport {
  delivered: number
  failed: number
  gone: number
  gaveUp: number
}

export interface WebhookDeliverer {
  /** Batches what is queued, sends every due batch there is room for, and waits for all answers. */
  runOnce(): Promise<RoundReport>
  /** Starts the polling loop. */
  start(): void
  /** Stops the loop; requests in flight are cut and their batches come back when their lease ends. */
  stop(): Promise<void>
}

/** Longest wait for a receiver before a claimed batch may be claimed again by anyone. */
const LEASE_MARGIN_MS = 60_000
const MAX_EVENTS_PER_ROUND = 1000
const MAX_ANSWER_BYTES = 4096

export function createWebhookDeliverer(ctx: Ctx, opts: DelivererOptions = {}): WebhookDeliverer {
  const timeoutMs = opts.timeoutMs ?? 10_000
  const pollMs = opts.pollMs ?? 500
  const maxInFlight = opts.maxInFlight ?? 16
  const perBatch = opts.perBatch ?? 100
  const random = opts.random ?? Math.random
  const http = opts.http ?? createOutboundHttp({ allowPrivateNetwork: ctx.config.allowPrivateNetwork })
  const inflight = new Set<Promise<void>>()
  const abort = new AbortController()
  // Every delivery in flight listens on this one signal (outbound.ts adds a listener per request, removed when
  // it ends): past Node's default of 10 it printed a leak warning that was none.
  setMaxListeners(maxInFlight + 10, abort.signal)
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let ticking: Promise<unknown> = Promise.resolve()
  let report: RoundReport = { delivered: 0, failed: 0, gone: 0, gaveUp: 0 }

  async function failed(b: ClaimedBatch, error: string, retryAfter?: number): Promise<void> {
    const now = ctx.clock.now()
    const at = nextAttemptAt({
      now,
      createdAt: b.created_at,
      attempts: b.attempts,
      retryAfterMs: retryAfter,
      random,
    })
    if (at) {
      report.failed++
      await rescheduleBatch(ctx.db, b.id, at, error)
      return
    }
    report.gaveUp++
    ctx.log.warn(
      { accountId: b.account_id, batchId: b.id, attempts: b.attempts, error },
      'webhook batch dropped after 24 h of failures',
    )
    await deleteBatch(ctx.db, b.id)
  }

  async function deliver(b: ClaimedBatch): Promise<void> {
    const headers = deliveryHeaders(b.id, b.secret, ctx.clock.now(), b.body)
    let status: number
    let retryAfter: number | undefined
    try {
      const res = await http.request({
        method: 'POST',
        url: b.url,
        headers,
        body: b.body,
        timeoutMs,
        maxResponseBytes: MAX_ANSWER_BYTES,
        signal: abort.signal,
      })
      status = res.status
      retryAfter = retryAfterMs(res.headers['retry-after'], ctx.clock.now())
    } catch (err) {
      // Shutting down: the batch's lease brings it back, with the same id, to whichever worker is left.
      if (err instanceof OutboundError && err.code === 'aborted') return
      return failed(b, err instanceof Error ? err.message : String(err))
    }
    if (status >= 200 && status < 300) {
      report.delivered++
      return deleteBatch(ctx.db, b.id)
    }
    if (status === 410) {
      // Gone: the receiver says it will never want these. The webhook is disabled (kept, so GET shows it and
      // the account can post the URL again) and what waited for it is dropped.
      report.gone++
      ctx.log.warn({ accountId: b.account_id, batchId: b.id }, 'webhook receiver answered 410: disabled')
      await retriedTransaction(ctx.db, async (tx) => {
        await disableWebhook(tx, b.account_id, ctx.clock.now())
        await dropPending(tx, b.account_id)
      })
      return
    }
    // Redirects are not followed: a 3xx is a failure like any other non-2xx.
    return failed(b, `HTTP ${status}`, retryAfter)
  }

  function track(p: Promise<void>): void {
    const tracked = p
      .catch((err: unknown) => logRoundFailure(ctx.log, err, 'webhook delivery'))
      .finally(() => {
        inflight.delete(tracked)
      })
    inflight.add(tracked)
  }

  /** Forms batches and starts sending the due ones there is room for; true when it filled every slot. */
  async function tick(): Promise<boolean> {
    const now = ctx.clock.now()
    await formBatches(ctx.db, now, MAX_EVENTS_PER_ROUND, perBatch)
    const room = maxInFlight - inflight.size
    if (room <= 0) return false
    const lease = new Date(now.getTime() + timeoutMs + LEASE_MARGIN_MS)
    const claimed = await claimDueBatches(ctx.db, now, lease, room)
    for (const b of claimed) track(deliver(b))
    return claimed.length === room
  }

  async function loop(): Promise<void> {
    if (stopped) return
    let busy = false
    try {
      const current = tick()
      ticking = current.catch(() => undefined)
      busy = await current
    } catch (err) {
      logRoundFailure(ctx.log, err, 'webhook delivery loop')
    }
    if (!stopped) timer = setTimeout(() => void loop(), busy ? 0 : pollMs)
  }

  return {
    async runOnce() {
      report = { delivered: 0, failed: 0, gone: 0, gaveUp: 0 }
      await tick()
      await Promise.all(inflight)
      return report
    },
    start() {
      timer = setTimeout(() => void loop(), 0)
    },
    async stop() {
      stopped = true
      clearTimeout(timer)
      abort.abort()
      await ticking
      await Promise.all(inflight)
    },
  }
}
