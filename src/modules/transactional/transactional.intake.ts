import type { AppContext } from '../../core/context.js'
import { createBatcher } from '../../core/db/batcher.js'
import { isRefusedStatement } from '../../core/db/errors.js'
import { queueMails, wakeSenders, type QueuedMail } from '../delivery/index.js'
import { addressKey, suppressedAmong, type AccountAddress } from '../subscribers/index.js'
import type { PreparedMessage } from './transactional.validate.js'

type Ctx = Pick<AppContext, 'dbHandle' | 'clock' | 'erasureSecret'>

/** One validated call whose sender domain is allowed: what the intake queues. */
export interface IntakeCall {
  accountId: number
  templateId: number | null
  prepared: PreparedMessage
  /** The HTML as sent (CSS inlined), or null for a text-only message. */
  html: string | null
}

export interface IntakeResult {
  bodyId: number
  accepted: number
  /** Invalid and suppressed `to` addresses. */
  rejected: number
}

type Outcome = { ok: true; result: IntakeResult } | { ok: false; error: unknown }

/**
 * Calls gathered into one run (those of one event-loop turn, or that waited while every run was busy), and runs
 * at once: each run holds one connection for two statements.
 */
const INTAKE_BATCHES = { maxBatch: 200, maxInFlight: 4 }
/** Bytes of content one insert statement carries at most (a message may hold 4 MB of attachments). */
const GROUP_BYTES = 8 * 1024 * 1024

/** The `to`, cc and bcc addresses of a call, whose suppression decides what is queued. */
function addressesOf(c: IntakeCall): AccountAddress[] {
  const p = c.prepared
  const copies = Object.values(p.copies).flatMap((x) => [...x.cc, ...x.bcc])
  return [...p.recipients.map((r) => r.email), ...copies].map((email) => ({ accountId: c.accountId, email }))
}

/** cc and bcc of the accepted recipients only, without suppressed addresses (they would bounce or complain). */
function liveCopies(p: PreparedMessage, accepted: Set<string>, isSuppressed: (email: string) => boolean) {
  const out: PreparedMessage['copies'] = {}
  for (const [to, c] of Object.entries(p.copies)) {
    if (!accepted.has(to)) continue
    const cc = c.cc.filter((a) => !isSuppressed(a))
    out[to] = { cc, bcc: c.bcc.filter((a) => !isSuppressed(a)) }
    const names = c.names && Object.entries(c.names).filter(([a]) => cc.includes(a))
    if (names?.length) out[to].names = Object.fromEntries(names)
  }
  return out
}

function mailOf(c: IntakeCall, suppressed: Set<string>): { mail: QueuedMail; rejected: number } {
  const p = c.prepared
  const isSuppressed = (email: string) => suppressed.has(addressKey(c.accountId, email))
  const accepted = p.recipients.filter((r) => !isSuppressed(r.email))
  const mail: QueuedMail = {
    body: {
      accountId: c.accountId,
      templateId: c.templateId,
      fromName: p.fromName,
      fromEmail: p.fromEmail,
      replyTo: p.replyTo ?? null,
      subject: p.subject,
      html: c.html,
      text: p.text ?? null,
      ampHtml: p.ampHtml ?? null,
      globalVars: p.globalVars,
      copies: liveCopies(p, new Set(accepted.map((r) => r.email)), isSuppressed),
      attachments: p.attachments,
      trackOpens: p.trackOpens,
      trackClicks: p.trackClicks,
      marketing: false,
    },
    recipients: accepted.map((r) => ({
      email: r.email,
      name: r.name,
      contactId: null,
      vars: p.varsByRecipient.get(r.email) ?? null,
    })),
    origin: { kind: 'transactional' },
  }
  return { mail, rejected: p.invalid + (p.recipients.length - accepted.length) }
}

const sizeOf = (m: QueuedMail) =>
  m.body.subject.length +
  (m.body.html?.length ?? 0) +
  (m.body.text?.length ?? 0) +
  (m.body.ampHtml?.length ?? 0) +
  (m.body.attachments ?? []).reduce((n, a) => n + a.content.length, 0)

/** Consecutive groups of at most GROUP_BYTES of content (a larger mail gets a group of its own). */
function bySize<T extends { mail: QueuedMail }>(items: T[]): T[][] {
  const groups: T[][] = []
  let group: T[] = []
  let bytes = 0
  for (const item of items) {
    const size = sizeOf(item.mail)
    if (group.length > 0 && bytes + size > GROUP_BYTES) {
      groups.push(group)
      group = []
      bytes = 0
    }
    group.push(item)
    bytes += size
  }
  if (group.length) groups.push(group)
  return groups
}

/**
 * The transactional intake's writes, coalesced: the calls that arrive together (one event-loop turn, or while
 * every run is busy) share one suppression lookup and one insert statement, so one round trip and one commit
 * serve them all instead of two per call. Each call answers only after the statement holding its rows has
 * committed.
 *
 * Failures: the insert is one statement, so a group is written whole or not at all. When the server refused it
 * for what it carried (bad data in one call, isRefusedStatement), each call of the group is written alone, so
 * only the offending call fails; any other failure (lost connection, shutdown: whether it committed is unknown)
 * fails every call of the group with that error, none of them answered. A failed suppression lookup fails the
 * run's calls before anything is written.
 */
export function createTransactionalIntake(ctx: Ctx): (call: IntakeCall) => Promise<IntakeResult> {
  async function insertGroup(group: { mail: QueuedMail; rejected: number }[]): Promise<Outcome[]> {
    const ok = (queued: { bodyId: number; messageIds: number[] }[]): Outcome[] =>
      queued.map((q, i) => ({
        ok: true,
        result: { bodyId: q.bodyId, accepted: q.messageIds.length, rejected: group[i]!.rejected },
      }))
    try {
      return ok(
        await queueMails(
          ctx.dbHandle,
          group.map((g) => g.mail),
          ctx.clock.now(),
        ),
      )
    } catch (error) {
      if (group.length === 1 || !isRefusedStatement(error)) return group.map(() => ({ ok: false, error }))
      return Promise.all(group.map(async (g) => (await insertGroup([g]))[0]!))
    }
  }

  const run = async (calls: IntakeCall[]): Promise<Outcome[]> => {
    const suppressed = await suppressedAmong(ctx.dbHandle, ctx.erasureSecret, calls.flatMap(addressesOf))
    const outcomes: Outcome[] = []
    for (const group of bySize(calls.map((c) => mailOf(c, suppressed))))
      outcomes.push(...(await insertGroup(group)))
    if (outcomes.some((o) => o.ok && o.result.accepted > 0)) wakeSenders(ctx)
    return outcomes
  }
  const coalesced = createBatcher(run, INTAKE_BATCHES)

  return async (call) => {
    const outcome = await coalesced(call)
    if (!outcome.ok) throw outcome.error
    return outcome.result
  }
}
