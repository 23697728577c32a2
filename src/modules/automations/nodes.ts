import { createHash } from 'node:crypto'
import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import type { OutboundHttp } from '../../core/net/outbound.js'
import { listSenders } from '../lists/index.js'
import { contactMergeText } from '../messages/index.js'
import {
  durationMs,
  findPipeline,
  type Condition,
  type PipelineNode,
  type PipelineRow,
  WEBHOOK_METHODS,
} from '../pipelines/index.js'
import { requireTemplate, type TemplateRow } from '../templates/index.js'
import { deliveryHeaders, findWebhook } from '../webhooks/index.js'
import { queueAutomationMail } from './automation-mail.js'
import { evaluateConditionBatch } from './conditions.js'
import {
  addTag,
  editFields,
  removeTag,
  subscribeToList,
  unsubscribeFromList,
  type Subject,
} from './node-effects.repo.js'
import { MAX_CHAIN, nextChain, nextChainsByContact } from './run-chain.js'
import { startRun } from './run-start.js'
import type { ClaimedRun } from './runs.repo.js'

export type EngineCtx = Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'jobs' | 'log' | 'config'>

/** What executing a node did to one run. */
export interface Outcome {
  /** Logged with the node's type and name. */
  props: Record<string, unknown>
  /** The port taken (`default` on plain-array nodes). */
  port?: string
  /** When the run's next node is due (a wait); default now. */
  dueAt?: Date
  /** Stay at this node, due then, writing no log entry (a goal not yet met, a webhook to retry). */
  stay?: Date
  /** The run ends here (an end node). */
  end?: string
  /** The new per-run state; default unchanged. */
  state?: Record<string, unknown>
}

export interface NodeEnv {
  ctx: EngineCtx
  now: Date
  pipeline: PipelineRow
  node: PipelineNode
  subjects: Map<number, Subject>
  /** For customers' URLs (webhook nodes): private addresses only with ALLOW_PRIVATE_NETWORK. */
  http: OutboundHttp
  /** For the operator's own URLs (SMS_GATEWAY_URL), wherever they point. */
  operatorHttp: OutboundHttp
}

/** Work done before the node's transaction (HTTP calls), per run id. */
export type Prepared = Map<number, unknown>

export interface NodeExecutor {
  /** Outside any transaction: calls to the outside world, whose answers `execute` then records. */
  prepare?(env: NodeEnv, runs: ClaimedRun[]): Promise<Prepared>
  /** Inside the node's transaction: effects for all runs of the group at once; one outcome per run. */
  execute(env: NodeEnv, tx: Executor, runs: ClaimedRun[], prepared: Prepared): Promise<Map<number, Outcome>>
}

const prop = <T>(node: PipelineNode, key: string) => node.properties[key] as T | undefined
const each = (runs: ClaimedRun[], fn: (r: ClaimedRun) => Outcome) => new Map(runs.map((r) => [r.id, fn(r)]))
const contactIdsOf = (runs: ClaimedRun[]) => [
  ...new Set(runs.flatMap((r) => (r.contactId ? [r.contactId] : []))),
]

/** The run's state with `value` stored under `key` of the per-node map `group` (state.mail[node] = id...). */
function withNodeState(
  r: ClaimedRun,
  group: string,
  nodeId: string,
  value: unknown,
): Record<string, unknown> {
  const current = (r.state[group] ?? {}) as Record<string, unknown>
  return { ...r.state, [group]: { ...current, [nodeId]: value } }
}

/**
 * The run's state without what `group` keeps for `nodeId`: for a node the run leaves, so that its next visit
 * (a node in a cycle) starts afresh instead of reading the last one's (a goal timed out at once, a webhook
 * counted the tries of the visit before).
 */
function withoutNodeState(
  state: Record<string, unknown>,
  group: string,
  nodeId: string,
): Record<string, unknown> {
  const current = (state[group] ?? {}) as Record<string, unknown>
  if (!(nodeId in current)) return state
  const { [nodeId]: _left, ...rest } = current
  return { ...state, [group]: rest }
}

const passThrough: NodeExecutor = { execute: async (_env, _tx, runs) => each(runs, () => ({ props: {} })) }

/**
 * In a run's state: a mail node skipped it (unsubscribed, suppressed) and sent it down `quarantine_skip`. The
 * nodes the pipeline put after that port are its way of handling such people (tag them, tell a CRM), so a run
 * so marked is not stopped for having left the list; its mail nodes still skip it.
 */
export const MAIL_SKIPPED = 'mail_skipped'

/** The key of the template in a mail node's prepared map (run ids are ≥ 1). */
const TEMPLATE = 0

const mail: NodeExecutor = {
  // Read before the transaction: on the embedded database the transaction holds the only connection.
  async prepare(env) {
    const templateId = Number(prop(env.node, 'template'))
    const template = await requireTemplate(env.ctx, env.pipeline.accountId, templateId).catch(() => undefined)
    return new Map([[TEMPLATE, template]])
  },
  async execute(env, tx, runs, prepared) {
    const { pipeline, node, subjects } = env
    const out = new Map<number, Outcome>()
    const ready: { run: ClaimedRun; subject: Subject }[] = []
    // A node without the port (its `next` a plain array, or no such key) sends skipped runs where it sends the
    // others, and the next node stops them as before.
    const skipPort = !!node.next && !Array.isArray(node.next) && Object.hasOwn(node.next, 'quarantine_skip')
    for (const run of runs) {
      const s = run.contactId ? subjects.get(run.contactId) : undefined
      const why = !s ? 'deleted' : s.suppressed ? 'suppressed' : s.status !== 1 ? 'unsubscribed' : undefined
      // Marked where the node has the port: the nodes after it run for it though it left the list (engine.ts).
      if (why || !s)
        out.set(run.id, {
          port: 'quarantine_skip',
          props: { skipped: why },
          ...(skipPort ? { state: { ...run.state, [MAIL_SKIPPED]: true } } : {}),
        })
      else ready.push({ run, subject: s })
    }
    if (ready.length === 0) return out
    const templateId = Number(prop(node, 'template'))
    const template = prepared.get(TEMPLATE) as TemplateRow | undefined
    if (!template) {
      for (const { run } of ready)
        out.set(run.id, { props: { error: 'template not found', template: templateId } })
      return out
    }
    const [list] = await listSenders(tx, pipeline.accountId, [pipeline.listId])
    const messageIds = await queueAutomationMail(env.ctx, tx, {
      accountId: pipeline.accountId,
      pipelineId: pipeline.id,
      actionId: node.id,
      body: {
        fromName: prop<string>(node, 'from_name') || list?.fromName || '',
        fromEmail: prop<string>(node, 'from_email') || list?.fromEmail || env.ctx.config.mailFrom,
        replyTo: prop<string>(node, 'reply_to') || list?.replyTo || null,
        subject: prop<string>(node, 'subject') || template.subject || template.name,
        html: template.html,
        text: null,
      },
      recipients: ready.map(({ run, subject }) => ({
        email: run.email,
        name: [subject.name, subject.surname].filter(Boolean).join(' '),
        contactId: run.contactId,
        vars: contactMergeText(subject),
      })),
    })
    ready.forEach(({ run }, i) => {
      const messageId = messageIds[i]!
      out.set(run.id, {
        props: { message_id: messageId },
        state: withNodeState(run, 'mail', node.id, messageId),
      })
    })
    return out
  },
}

const SMS_TIMEOUT_MS = 10_000

const sms: NodeExecutor = {
  async prepare(env, runs) {
    const url = env.ctx.config.smsGatewayUrl
    const done: Prepared = new Map()
    const text = String(prop(env.node, 'text') ?? '')
    await Promise.all(
      runs.map(async (run) => {
        const phone = run.contactId ? env.subjects.get(run.contactId)?.phone : undefined
        if (!url) return done.set(run.id, { skipped: 'no sms gateway' })
        if (!phone) return done.set(run.id, { skipped: 'no phone' })
        const body = JSON.stringify({
          to: phone,
          text,
          email: run.email,
          pipeline_id: env.pipeline.id,
          action_id: env.node.id,
        })
        try {
          const res = await env.operatorHttp.request({
            method: 'POST',
            url,
            headers: { 'content-type': 'application/json' },
            body,
            timeoutMs: SMS_TIMEOUT_MS,
            maxResponseBytes: 4096,
          })
          done.set(
            run.id,
            res.status < 300 ? { sent: true, status: res.status } : { error: `HTTP ${res.status}` },
          )
        } catch (err) {
          done.set(run.id, { error: err instanceof Error ? err.message : String(err) })
        }
      }),
    )
    return done
  },
  execute: async (_env, _tx, runs, prepared) =>
    each(runs, (r) => ({ props: (prepared.get(r.id) ?? {}) as Record<string, unknown> })),
}

const wait: NodeExecutor = {
  async execute(env, _tx, runs) {
    const dueAt = new Date(env.now.getTime() + durationMs(env.node.properties))
    return each(runs, () => ({ props: { until: dueAt.toISOString() }, dueAt }))
  },
}

/** What a condition is evaluated on for run `r` of pipeline `p` (check and goal nodes, goal jumps, the goal watch). */
export function conditionSubject(
  p: Pick<PipelineRow, 'accountId'>,
  r: Pick<ClaimedRun, 'id' | 'contactId' | 'email'>,
) {
  return {
    accountId: p.accountId,
    runId: r.id,
    contactId: r.contactId,
    email: r.email,
  }
}

/**
 * Each run's condition result, evaluated before the transaction (what it reads is committed state anyway):
 * one statement for the whole group of runs at this node, not one per run.
 */
async function evaluateAll(
  env: NodeEnv,
  runs: ClaimedRun[],
  condition: Condition | undefined,
): Promise<Prepared> {
  const out: Prepared = new Map()
  if (!condition || runs.length === 0) return out
  const met = await evaluateConditionBatch(
    env.ctx.db,
    runs.map((r) => conditionSubject(env.pipeline, r)),
    condition,
    env.now,
  )
  for (const r of runs) out.set(r.id, met.has(r.id))
  return out
}

const check: NodeExecutor = {
  prepare: (env, runs) => evaluateAll(env, runs, prop<Condition>(env.node, 'condition')),
  execute: async (_env, _tx, runs, met) =>
    each(runs, (r) => {
      const yes = met.get(r.id) === true
      return { port: yes ? 'yes' : 'no', props: { result: yes ? 'yes' : 'no' } }
    }),
}

/** The variant of a run: a fixed point in [0, total weight) from a hash of the run id, so a retry picks the same. */
export function pickVariant(runId: number, variants: Record<string, unknown>): string | undefined {
  const entries = Object.entries(variants).map(([k, w]) => [k, Math.max(0, Number(w) || 0)] as const)
  const total = entries.reduce((n, [, w]) => n + w, 0)
  if (total <= 0) return entries[0]?.[0]
  const point = (createHash('sha256').update(String(runId)).digest().readUInt32BE(0) / 2 ** 32) * total
  let acc = 0
  for (const [k, w] of entries) {
    acc += w
    if (point < acc) return k
  }
  return entries[entries.length - 1]?.[0]
}

const split: NodeExecutor = {
  async execute(env, _tx, runs) {
    const variants = prop<Record<string, unknown>>(env.node, 'variants') ?? {}
    return each(runs, (r) => {
      const v = pickVariant(r.id, variants)
      return { port: v ?? 'default', props: { variant: v ?? null } }
    })
  },
}

const tag: NodeExecutor = {
  async execute(env, tx, runs) {
    const t = String(prop(env.node, 'tag') ?? '')
    if (t) await addTag(tx, contactIdsOf(runs), t, env.now, nextChainsByContact(runs))
    return each(runs, () => ({ props: { tag: t } }))
  },
}

const untag: NodeExecutor = {
  async execute(env, tx, runs) {
    const t = String(prop(env.node, 'tag') ?? '')
    if (t) await removeTag(tx, contactIdsOf(runs), t, env.now)
    return each(runs, () => ({ props: { tag: t } }))
  },
}

const subscribe: NodeExecutor = {
  async execute(env, tx, runs) {
    const listId = Number(prop(env.node, 'list_id'))
    await subscribeToList(
      tx,
      env.pipeline.accountId,
      contactIdsOf(runs),
      listId,
      env.now,
      nextChainsByContact(runs),
    )
    return each(runs, () => ({ props: { list_id: listId } }))
  },
}

const unsubscribe: NodeExecutor = {
  async execute(env, tx, runs) {
    const listId = Number(prop(env.node, 'list_id'))
    await unsubscribeFromList(tx, env.pipeline.accountId, contactIdsOf(runs), listId, env.now)
    return each(runs, () => ({ props: { list_id: listId } }))
  },
}

const edit: NodeExecutor = {
  async execute(env, tx, runs) {
    const fields = prop<Record<string, unknown>>(env.node, 'fields') ?? {}
    if (Object.keys(fields).length) await editFields(tx, contactIdsOf(runs), fields, env.now)
    return each(runs, () => ({ props: { fields: Object.keys(fields) } }))
  },
}

/**
 * The call's headers: the node's own over ours (its `Content-Type` for a body that is no JSON), in any case of
 * their names, except the signature's (`webhook-id`, `-timestamp`, `-signature`) when we sign, which only we
 * may write. (Our names are lower-case.)
 */
function withNodeHeaders(ours: Record<string, string>, node: Record<string, string>): Record<string, string> {
  const signature = (name: string) => name.startsWith('webhook-') && name in ours
  const given = Object.entries(node).filter(([name]) => !signature(name.toLowerCase()))
  const named = new Set(given.map(([name]) => name.toLowerCase()))
  return {
    ...Object.fromEntries(Object.entries(ours).filter(([name]) => !named.has(name))),
    ...Object.fromEntries(given),
  }
}

/** Tries of a webhook node before the run goes on with a logged failure; waits between them double. */
export const WEBHOOK_TRIES = 5
const WEBHOOK_FIRST_RETRY_MS = 30_000
const WEBHOOK_TIMEOUT_MS = 10_000

type WebhookAnswer = { ok: true; status: number } | { ok: false; error: string }

const webhook: NodeExecutor = {
  async prepare(env, runs) {
    const { node, pipeline } = env
    const url = String(prop(node, 'url') ?? '')
    // The method the node names (validated against WEBHOOK_METHODS).
    const named = String(prop(node, 'method') ?? 'POST').toUpperCase()
    const method = WEBHOOK_METHODS.find((m) => m === named) ?? 'POST'
    const headers = (prop<Record<string, string>>(node, 'headers') ?? {}) as Record<string, string>
    const secret = (await findWebhook(env.ctx.db, pipeline.accountId))?.secret
    const done: Prepared = new Map()
    await Promise.all(
      runs.map(async (run) => {
        // GET carries no body (signed as empty); the others the node's body, or the run's own payload.
        const given = prop<unknown>(node, 'body')
        const payload = {
          email: run.email,
          pipeline_id: pipeline.id,
          action_id: node.id,
          trigger_id: String(run.rootId),
        }
        const body =
          method === 'GET' ? '' : typeof given === 'string' ? given : JSON.stringify(given ?? payload)
        // The same id on every retry of one run's call, so the receiver can deduplicate.
        const id = `automation-${run.id}-${node.id}`
        const signed = secret
          ? deliveryHeaders(id, secret, env.ctx.clock.now(), body)
          : { 'content-type': 'application/json' }
        let answer: WebhookAnswer
        try {
          const res = await env.http.request({
            method,
            url,
            headers: withNodeHeaders(signed, headers),
            ...(method === 'GET' ? {} : { body }),
            timeoutMs: WEBHOOK_TIMEOUT_MS,
            maxResponseBytes: 4096,
          })
          answer =
            res.status >= 200 && res.status < 300
              ? { ok: true, status: res.status }
              : { ok: false, error: `HTTP ${res.status}` }
        } catch (err) {
          answer = { ok: false, error: err instanceof Error ? err.message : String(err) }
        }
        done.set(run.id, answer)
      }),
    )
    return done
  },
  async execute(env, _tx, runs, prepared) {
    return each(runs, (r) => {
      const a = prepared.get(r.id) as WebhookAnswer | undefined
      const tries = Number(((r.state.webhook ?? {}) as Record<string, unknown>)[env.node.id] ?? 0) + 1
      const left = withoutNodeState(r.state, 'webhook', env.node.id)
      if (a?.ok) return { props: { status: a.status, tries }, state: left }
      const error = a && !a.ok ? a.error : 'not sent'
      if (tries >= WEBHOOK_TRIES) return { props: { error, tries, failed: true }, state: left }
      return {
        props: {},
        stay: new Date(env.now.getTime() + WEBHOOK_FIRST_RETRY_MS * 2 ** (tries - 1)),
        state: withNodeState(r, 'webhook', env.node.id, tries),
      }
    })
  },
}

const LOOP_STOPPED = `not started: ${MAX_CHAIN} runs were started in a row by automations without a pause (a loop through pipelines?)`

const trigger: NodeExecutor = {
  async execute(env, tx, runs) {
    const target = Number(prop(env.node, 'pipeline_id'))
    const p = await findPipeline(tx, env.pipeline.accountId, target)
    const out = new Map<number, Outcome>()
    for (const r of runs) {
      if (!p) {
        out.set(r.id, { props: { pipeline_id: target, error: 'pipeline not found' } })
        continue
      }
      const started = await startRun(tx, p, r.email, 'trigger', env.now, nextChain(r.state))
      out.set(r.id, {
        props: {
          pipeline_id: target,
          result: started.kind,
          ...('runId' in started ? { trigger_id: String(started.runId) } : {}),
          ...(started.kind === 'loop' ? { error: LOOP_STOPPED } : {}),
        },
      })
    }
    return out
  },
}

/** The goal nodes a run has passed. */
export function goalsPassed(state: Record<string, unknown>): string[] {
  return Array.isArray(state.goalsPassed) ? (state.goalsPassed as string[]) : []
}

/** How often a run waiting at a goal checks its condition again. */
export const GOAL_RECHECK_MS = 60_000

const goal: NodeExecutor = {
  prepare: (env, runs) => evaluateAll(env, runs, prop<Condition>(env.node, 'condition')),
  async execute(env, _tx, runs, met) {
    const timeoutMs = prop(env.node, 'timeout') ? durationMs(prop(env.node, 'timeout')) : undefined
    const out = new Map<number, Outcome>()
    for (const r of runs) {
      // A goal passed (met or timed out) is never jumped to again.
      const passed = {
        ...withoutNodeState(r.state, 'goal', env.node.id),
        goalsPassed: [...goalsPassed(r.state), env.node.id],
      }
      if (met.get(r.id) === true) {
        // Met goals are shared by the branches of the run's trigger (engine.ts).
        const goalsMet = Array.isArray(r.state.goalsMet) ? (r.state.goalsMet as string[]) : []
        out.set(r.id, { props: { goal: 'met' }, state: { ...passed, goalsMet: [...goalsMet, env.node.id] } })
        continue
      }
      const since = Number(
        ((r.state.goal ?? {}) as Record<string, unknown>)[env.node.id] ?? env.now.getTime(),
      )
      const deadline = timeoutMs === undefined ? undefined : since + timeoutMs
      if (deadline !== undefined && env.now.getTime() >= deadline) {
        out.set(r.id, { props: { goal: 'timeout' }, state: passed })
        continue
      }
      const recheck = env.now.getTime() + GOAL_RECHECK_MS
      out.set(r.id, {
        props: {},
        stay: new Date(deadline === undefined ? recheck : Math.min(recheck, deadline)),
        state: withNodeState(r, 'goal', env.node.id, since),
      })
    }
    return out
  },
}

const end: NodeExecutor = {
  execute: async (_env, _tx, runs) => each(runs, () => ({ props: {}, end: 'end node' })),
}

export const EXECUTORS: Record<PipelineNode['type'], NodeExecutor> = {
  mail,
  sms,
  wait,
  check,
  split,
  tag,
  untag,
  subscribe,
  unsubscribe,
  edit,
  webhook,
  trigger,
  goal,
  end,
  note: passThrough,
}
