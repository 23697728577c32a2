import { DAY_MS } from '../../core/clock.js'
import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { retriedTransaction } from '../../core/db/retry.js'
import { activePipelinesFor, type PipelineRow, type TriggerType } from '../pipelines/index.js'
import { claimSignals, deleteSignals, type PendingSignal } from './node-effects.repo.js'
import { chainOf } from './run-chain.js'
import { startRun } from './run-start.js'
import {
  datePipelines,
  lockDateScan,
  markDateScanned,
  startDateRuns,
  type DatePipeline,
  type DateScanDay,
} from './date-scans.repo.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'log'>

const SIGNAL_BATCH = 1000

const TRIGGER_OF: Record<string, TriggerType> = {
  subscribe: 'subscribe',
  tag: 'tag',
  event: 'event',
  purchase: 'purchase',
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/** Whether a pipeline's trigger matches what the signal says happened. */
export function matches(p: PipelineRow, s: PendingSignal): boolean {
  const t = p.trigger
  switch (t.type) {
    case 'subscribe':
      return Number(s.payload.list_id) === p.listId
    case 'tag': {
      const tags = Array.isArray(s.payload.tags) ? s.payload.tags : []
      return t.tag !== undefined && tags.includes(t.tag)
    }
    case 'event':
      return (
        (!t.category || t.category === str(s.payload.category)) &&
        (!t.action || t.action === str(s.payload.action))
      )
    case 'purchase':
      return !t.shop || t.shop === str(s.payload.shop)
    default:
      return false
  }
}

/**
 * One round of the signal consumer: claims a batch of signals (SKIP LOCKED, so consumers share the outbox),
 * starts the runs their matching pipelines call for and deletes them, all in one transaction. How many signals
 * it consumed.
 */
export async function consumeSignals(ctx: Ctx): Promise<number> {
  // Two consumers (worker processes) may start runs for one contact in opposite orders, each holding the
  // other's next advisory lock: PostgreSQL aborts one, which wrote nothing and runs again.
  const { consumed, loops } = await retriedTransaction(ctx.db, async (tx) => {
    const loops = new Set<number>()
    const batch = await claimSignals(tx, SIGNAL_BATCH)
    if (batch.length === 0) return { consumed: 0, loops }
    const now = ctx.clock.now()
    const pipelinesOf = new Map<string, Promise<PipelineRow[]>>()
    const candidates = (ex: Executor, accountId: number, type: TriggerType) => {
      const key = `${accountId}:${type}`
      let found = pipelinesOf.get(key)
      if (!found) pipelinesOf.set(key, (found = activePipelinesFor(ex, accountId, type)))
      return found
    }
    for (const s of batch) {
      const type = TRIGGER_OF[s.kind]
      if (!type) continue
      for (const p of await candidates(tx, s.accountId, type)) {
        if (!matches(p, s)) continue
        const started = await startRun(tx, p, s.email, s.kind, now, chainOf(s.payload))
        if (started.kind === 'loop') loops.add(p.id)
      }
    }
    await deleteSignals(
      tx,
      batch.map((s) => s.id),
    )
    return { consumed: batch.length, loops }
  })
  // The operator's to see (once, after the commit): a run not started has no automation-log entry that would say so.
  if (loops.size)
    ctx.log.warn(
      { pipelineIds: [...loops] },
      'automation runs not started: too many started in a row by automations without a pause (a loop?)',
    )
  return consumed
}

const dayOf = (d: Date) => d.toISOString().slice(0, 10)

/**
 * How often the date trigger scans again within a day: a date pipeline created during the day, or a member
 * who joined (or whose date field changed) today with today's month-day, starts within this long rather than
 * next year. A scan starts nothing twice, so scanning again is only its cost: one statement per date pipeline.
 */
export const DATE_RESCAN_MS = 60_000

/**
 * The month-days (`MM-DD`) whose dates fall on `day` (`YYYY-MM-DD`): its own, and on 28 February of a year
 * without a 29th, the 29th too, so a leap-day birthday is greeted every year, not every fourth.
 */
export function monthDaysOn(day: string): string[] {
  const monthDay = day.slice(5)
  const year = Number(day.slice(0, 4))
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
  return monthDay === '02-28' && !leap ? [monthDay, '02-29'] : [monthDay]
}

/**
 * How many days back a scan makes up for, when the workers were down for whole days (a day is scanned when the
 * clock reaches it and every DATE_RESCAN_MS within it). A birthday mail a few days late beats none; one a week
 * late mostly reads oddly, so older days stay missed.
 */
export const DATE_CATCHUP_DAYS = 3

/**
 * The days a scan on `today` covers for a pipeline last scanned on `scannedOn`: today, after the days missed
 * since then (at most DATE_CATCHUP_DAYS, oldest first). None before the pipeline's first scan, nor from the
 * year before: a date run counts for its year, so a run of 31 December started in January would take the next
 * 31 December's.
 */
export function daysToScan(scannedOn: string | undefined, today: string): string[] {
  const days = [today]
  if (scannedOn === undefined) return days
  const midnight = Date.parse(`${today}T00:00:00Z`)
  for (let back = 1; back <= DATE_CATCHUP_DAYS; back++) {
    const day = dayOf(new Date(midnight - back * DAY_MS))
    if (day <= scannedOn || day.slice(0, 4) !== today.slice(0, 4)) break
    days.unshift(day)
  }
  return days
}

/** A day's scan; `late` for a day scanned after it ended (daysToScan). */
function scanDay(day: string, late: boolean): DateScanDay {
  return {
    monthDays: monthDaysOn(day),
    yearStart: new Date(`${day.slice(0, 4)}-01-01T00:00:00Z`),
    subscribedBefore: late ? new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS) : undefined,
  }
}

/** One pipeline's scan, in one transaction: the days it missed and today; how many runs it started. */
async function scanPipeline(tx: Executor, p: DatePipeline, today: string, now: Date): Promise<number> {
  const scannedOn = await lockDateScan(tx, p.id)
  let started = 0
  for (const day of daysToScan(scannedOn, today))
    started += await startDateRuns(tx, p, scanDay(day, day !== today), now)
  // The rescans within the day (every DATE_RESCAN_MS) write nothing.
  if (scannedOn !== today) await markDateScanned(tx, p.id, today)
  return started
}

/**
 * The yearly date trigger: when the clock's day changes, and every DATE_RESCAN_MS within it, starts runs of
 * every active date pipeline for the members whose field has today's month-days (UTC; monthDaysOn), at most
 * once per pipeline, contact and year; and for the days missed while no worker ran (daysToScan). A restart
 * scans again, which starts nothing twice.
 */
export function createDateScanner(ctx: Ctx) {
  let lastDay: string | undefined
  let lastScan = Number.NEGATIVE_INFINITY
  return async function scanIfDue(): Promise<number> {
    const now = ctx.clock.now()
    const day = dayOf(now)
    if (day === lastDay && now.getTime() - lastScan < DATE_RESCAN_MS) return 0
    let started = 0
    for (const p of await datePipelines(ctx.db)) {
      started += await retriedTransaction(ctx.db, (tx) => scanPipeline(tx, p, day, now))
    }
    lastDay = day
    lastScan = now.getTime()
    if (started) ctx.log.info({ started, day }, 'date-triggered automation runs')
    return started
  }
}
