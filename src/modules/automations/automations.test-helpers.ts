import { sql } from 'drizzle-orm'
import { startTestApp, type TestApp, type TestAppOptions } from '../../../test/helpers/app.js'
import type { SmtpSink, SinkMessage } from '../../../test/helpers/smtp-sink.js'
import { ManualClock } from '../../core/clock.js'
import { queryRows } from '../../core/db/sql.js'
import { insertPipeline, type PipelineNode, type PipelineTrigger } from '../pipelines/index.js'
import { runAutomations } from './index.js'

/** Fixtures of the engine tests: the app on a manual clock, a list, a template, pipelines written straight to the table. */

/** Where every engine test's clock starts. */
export const START = new Date('2026-05-04T08:00:00Z')

/**
 * The app every engine test runs: a manual clock at START (multi-day flows in milliseconds) and mail to
 * `sink`. The sink is the caller's, started at file level so that it closes after the app (the app's pooled
 * SMTP connections would hold its close otherwise).
 */
export async function startAutomationApp(
  sink: SmtpSink,
  config: TestAppOptions['config'] = {},
): Promise<{ t: TestApp; clock: ManualClock }> {
  const clock = new ManualClock(START)
  const t = await startTestApp({ config: { smtpUrl: sink.url, ...config }, clock })
  return { t, clock }
}

export async function createList(t: TestApp, body: Record<string, unknown> = {}): Promise<number> {
  const res = await t.req('POST', '/lists', {
    body: { name: 'Automated', from_name: 'Shop', from_email: 'news@shop.example', ...body },
  })
  if (res.status !== 200) throw new Error(`list not created: ${res.text}`)
  return res.body.id as number
}

export async function createTemplate(t: TestApp, html: string, subject = ''): Promise<number> {
  const res = await t.req('POST', '/templates', { body: { name: 'Mail', html, subject } })
  if (res.status !== 200) throw new Error(`template not created: ${res.text}`)
  return res.body.id as number
}

export async function subscribe(
  t: TestApp,
  listId: number,
  email: string,
  data: Record<string, unknown> = {},
  opts: Record<string, unknown> = {},
) {
  const res = await t.req('POST', `/lists/${listId}/subscribe`, {
    body: { subscriber_data: { email, ...data }, trigger_autoresponders: true, ...opts },
  })
  if (res.status !== 200) throw new Error(`not subscribed: ${res.text}`)
  return res.body
}

/** A node; `next` an array (or ports object) of ids. */
export const node = (
  id: string,
  type: PipelineNode['type'],
  properties: Record<string, unknown> = {},
  next: PipelineNode['next'] = [],
): PipelineNode => ({ id, type, properties: { name: `${type} ${id}`, ...properties }, next })

export async function createPipeline(
  t: TestApp,
  listId: number,
  actions: PipelineNode[],
  opts: { trigger?: PipelineTrigger; reentry?: 'once' | 'repeat'; status?: 'active' | 'paused' } = {},
): Promise<number> {
  const row = await insertPipeline(t.ctx.db, {
    accountId: t.account.id,
    name: 'Flow',
    listId,
    status: opts.status ?? 'active',
    trigger: opts.trigger ?? { type: 'subscribe' },
    reentry: opts.reentry ?? 'once',
    start: actions[0]!.id,
    actions,
  })
  return row.id
}

/**
 * Moves the engine until nothing is due and no signal waits (the worker's own loop may hold some runs for a
 * moment, so this polls, bounded).
 */
export async function settle(t: TestApp): Promise<void> {
  const deadline = Date.now() + 20_000
  for (;;) {
    await runAutomations(t.ctx)
    const [row] = await queryRows<{ n: number }>(
      t.ctx.db,
      sql`SELECT ((SELECT count(*) FROM automation_runs r JOIN pipelines p ON p.id = r.pipeline_id
                   WHERE r.status = 'active' AND r.due_at <= ${t.ctx.clock.now().toISOString()}::timestamptz
                     AND p.status = 'active' AND p.deleted_at IS NULL)
                + (SELECT count(*) FROM signals))::int AS n`,
    )
    if (row!.n === 0) return
    if (Date.now() > deadline) throw new Error(`automations did not settle: ${row!.n} due`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

export interface LogRow {
  run_id: number
  action_id: string
  props: Record<string, unknown>
  next: string[] | null
}

export async function logOf(t: TestApp, pipelineId: number, email?: string): Promise<LogRow[]> {
  return queryRows<LogRow>(
    t.ctx.db,
    sql`SELECT run_id::int AS run_id, action_id, props, next FROM automation_log
        WHERE pipeline_id = ${pipelineId} AND (${email ?? null}::text IS NULL OR email = ${email ?? null})
        ORDER BY id`,
  )
}

export interface RunRow {
  id: number
  status: string
  node_id: string
  end_reason: string | null
  email: string
  state: Record<string, unknown>
}

export async function runsOf(t: TestApp, pipelineId: number): Promise<RunRow[]> {
  return queryRows<RunRow>(
    t.ctx.db,
    sql`SELECT id::int AS id, status, node_id, end_reason, email, state FROM automation_runs
        WHERE pipeline_id = ${pipelineId} ORDER BY id`,
  )
}

export async function tagsOf(t: TestApp, email: string): Promise<string[]> {
  const res = await t.req('GET', `/subscribers/${encodeURIComponent(email)}`)
  return (res.body.subscriber?.tags ?? res.body.tags ?? []) as string[]
}

/** The mail the sink got for `address`, waiting (bounded) until there are `n`. */
export async function mailsTo(
  sink: SmtpSink,
  address: string,
  n: number,
  timeoutMs = 15_000,
): Promise<SinkMessage[]> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = sink.messages.filter((m) => m.envelopeTo.includes(address))
    if (found.length >= n) return found
    if (Date.now() > deadline) throw new Error(`expected ${n} mail(s) to ${address}, got ${found.length}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

export const DAY = 86_400_000
