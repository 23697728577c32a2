import { sql } from 'drizzle-orm'
import type { TestApp } from '../../../test/helpers/app.js'
import { queryOne } from '../../core/db/sql.js'
import { addToCounters, type EventType } from '../events/index.js'
import { insertEvent } from '../outcomes/index.js'
import { messages, type MessageRow } from '../messages/index.js'
import { trackerEvents } from '../tracker-events/index.js'
import { transactions } from '../transactions/index.js'
import { automationLog, automationRuns, type RunStatus } from './automations.table.js'

/** Seeds for the condition, statistics and log tests: rows as the engine and the recorder leave them. */

export const at = (iso: string) => new Date(iso)

export async function createListWith(
  t: TestApp,
  name: string,
  people: Record<string, unknown>[],
  key?: string,
): Promise<number> {
  const opts = key ? { key } : {}
  const list = await t.req('POST', '/lists', { body: { name }, ...opts })
  if (list.status !== 200) throw new Error(`list: ${list.status}`)
  const res = await t.req('POST', `/lists/${list.body.id}/subscribe-bulk`, {
    body: { subscriber_data: people },
    ...opts,
  })
  if (res.status !== 200) throw new Error(`subscribe-bulk: ${res.status} ${res.text}`)
  return list.body.id as number
}

export async function contactId(t: TestApp, accountId: number, email: string): Promise<number> {
  const row = await queryOne<{ id: number }>(
    t.ctx.db,
    sql`SELECT id FROM contacts WHERE account_id = ${accountId} AND email = ${email}`,
  )
  if (!row) throw new Error(`no contact ${email}`)
  return row.id
}

export interface RunSeed {
  accountId: number
  pipelineId: number
  email: string
  contactId?: number | null
  status?: RunStatus
  startedAt: Date
  state?: Record<string, unknown>
}

export async function insertRun(t: TestApp, r: RunSeed): Promise<number> {
  const [row] = await t.ctx.db
    .insert(automationRuns)
    .values({
      accountId: r.accountId,
      pipelineId: r.pipelineId,
      pipelineVersion: 1,
      contactId: r.contactId ?? null,
      email: r.email,
      triggerKind: 'api',
      status: r.status ?? 'active',
      nodeId: 'n1',
      dueAt: r.startedAt,
      state: r.state ?? {},
      startedAt: r.startedAt,
      endedAt: r.status === 'ended' ? r.startedAt : null,
    })
    .returning({ id: automationRuns.id })
  return row!.id
}

export interface MailSeed {
  accountId: number
  pipelineId: number
  actionId: string
  email: string
  contactId?: number | null
  createdAt: Date
  /** 1 accepted (default), 2 refused, 3 skipped. */
  status?: 1 | 2 | 3
  firstOpenAt?: Date
  firstClickAt?: Date
}

/** An automation mail node's ledger row; accepted ones with their `send` event and `inject` counted. */
export async function insertMail(t: TestApp, m: MailSeed): Promise<MessageRow> {
  const status = m.status ?? 1
  const [row] = await t.ctx.db
    .insert(messages)
    .values({
      accountId: m.accountId,
      kind: 'automation',
      pipelineId: m.pipelineId,
      actionId: m.actionId,
      contactId: m.contactId ?? null,
      email: m.email,
      subject: 'Welcome',
      status,
      createdAt: m.createdAt,
      sentAt: status === 3 ? null : m.createdAt,
      firstOpenAt: m.firstOpenAt ?? null,
      firstClickAt: m.firstClickAt ?? null,
    })
    .returning()
  if (status === 1) {
    await mailEvent(t, row!, 'send', m.createdAt)
    await addToCounters(t.ctx.db, scope(row!), row!.id, { inject: 1 })
  }
  return row!
}

const scope = (m: MessageRow) => ({ campaignId: 0, pipelineId: m.pipelineId, actionId: m.actionId })

export async function mailEvent(
  t: TestApp,
  m: MessageRow,
  event: EventType,
  when: Date,
  url: string | null = null,
): Promise<void> {
  await insertEvent(t.ctx.db, {
    accountId: m.accountId,
    messageId: m.id,
    campaignId: 0,
    pipelineId: m.pipelineId,
    actionId: m.actionId,
    contactId: m.contactId,
    email: m.email,
    event,
    url,
    occurredAt: when,
  })
}

/** An event with its counters, as the recorder counts it (`unique`: this call stamped the milestone). */
export async function countedEvent(
  t: TestApp,
  m: MessageRow,
  event: 'open' | 'click' | 'hard_bounce' | 'soft_bounce' | 'spam' | 'unsub',
  when: Date,
  unique: boolean,
): Promise<void> {
  await mailEvent(t, m, event, when)
  const delta: Record<string, number> = {}
  if (event === 'open') Object.assign(delta, { total_open: 1, ...(unique ? { open: 1 } : {}) })
  else if (event === 'click') Object.assign(delta, { total_click: 1, ...(unique ? { click: 1 } : {}) })
  else if (unique && event === 'hard_bounce') Object.assign(delta, { hard_bounce: 1, bounce: 1 })
  else if (unique && event === 'soft_bounce') Object.assign(delta, { soft_bounce: 1, bounce: 1 })
  else if (unique) delta[event] = 1
  await addToCounters(t.ctx.db, scope(m), m.id, delta)
}

export async function insertPurchase(
  t: TestApp,
  accountId: number,
  orderId: string,
  email: string,
  amount: number,
  when: Date,
): Promise<void> {
  await t.ctx.db
    .insert(transactions)
    .values({ accountId, orderId, email, amount: String(amount), occurredAt: when })
}

export async function insertTrackerEvent(
  t: TestApp,
  accountId: number,
  contact: number,
  category: string,
  action: string,
): Promise<void> {
  await t.ctx.db.insert(trackerEvents).values({ accountId, contactId: contact, category, action })
}

export interface LogSeed {
  accountId: number
  pipelineId: number
  runId: number
  actionId: string
  email: string
  props?: Record<string, unknown>
  next?: string[] | null
  /** ISO text with up to microseconds, written as is. */
  createdAt: string
}

export async function insertLog(t: TestApp, l: LogSeed): Promise<number> {
  const row = await queryOne<{ id: number }>(
    t.ctx.db,
    sql`INSERT INTO ${automationLog} (account_id, pipeline_id, run_id, action_id, email, props, next, created_at)
        VALUES (${l.accountId}, ${l.pipelineId}, ${l.runId}, ${l.actionId}, ${l.email},
                ${JSON.stringify(l.props ?? {})}::jsonb, ${l.next === undefined ? null : JSON.stringify(l.next)}::jsonb,
                ${l.createdAt}::timestamptz)
        RETURNING id`,
  )
  return Number(row!.id)
}
