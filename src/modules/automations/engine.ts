import { createOutboundHttp, type OutboundHttp } from '../../core/net/outbound.js'
import {
  nextIds,
  pipelineById,
  type Condition,
  type PipelineNode,
  type PipelineRow,
} from '../pipelines/index.js'
import { evaluateCondition } from './conditions.js'
import { loadSubjects, type Subject } from './node-effects.repo.js'
import { EXECUTORS, goalsPassed, type EngineCtx, type NodeEnv, type Outcome, type Prepared } from './nodes.js'
import {
  claimDueRuns,
  insertLogEntries,
  lockClaimed,
  moveRuns,
  type ClaimedRun,
  type LogEntry,
  type RunMove,
} from './runs.repo.js'
import { consumeSignals, createDateScanner } from './triggers.js'

export interface EngineOptions {
  /** Runs claimed per round. */
  batch?: number
  /** Groups (pipeline + node) executed at once. */
  parallel?: number
  /** How often the loop looks for work when there was none. */
  pollMs?: number
  http?: OutboundHttp
}

export interface Engine {
  /** Consumes signals, scans date triggers and executes every due run until none is left (bounded). */
  runOnce(maxRounds?: number): Promise<number>
  start(): void
  stop(): Promise<void>
}

/** Why a run stops or ends without its node executing. */
type Cut = { stop: string } | { end: string }

/**
 * The automation engine: every run sits at one node with a due time. A round claims due runs (a lease, SKIP
 * LOCKED), groups them by pipeline and node, and executes each group in ONE transaction that writes the
 * node's effects, one log entry per run (one INSERT) and every run's move (one UPDATE). A worker that dies
 * mid-group commits nothing of it; its lease runs out and the group executes again, once.
 */
export function createEngine(ctx: EngineCtx, opts: EngineOptions = {}): Engine {
  const batch = opts.batch ?? 500
  const parallel = opts.parallel ?? (ctx.config.databaseUrl ? 4 : 1)
  const pollMs = opts.pollMs ?? 250
  const http = opts.http ?? createOutboundHttp({ allowPrivateNetwork: ctx.config.allowPrivateNetwork })
  const scanDates = createDateScanner(ctx)
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let current: Promise<unknown> = Promise.resolve()

  const logOf = (
    p: PipelineRow,
    r: ClaimedRun,
    node: string,
    props: Record<string, unknown>,
    next: string[] | null,
  ): LogEntry => ({
    accountId: r.accountId,
    pipelineId: p.id,
    runId: r.id,
    actionId: node,
    email: r.email,
    props,
    next,
  })

  /** The goal node a run meets the condition of, when it is not at a goal already. */
  async function goalMet(p: PipelineRow, node: PipelineNode | undefined, r: ClaimedRun, now: Date) {
    if (node?.type === 'goal') return undefined
    const passed = goalsPassed(r.state)
    for (const g of p.actions) {
      if (g.type !== 'goal' || !g.properties.condition || passed.includes(g.id)) continue
      const subject = {
        accountId: p.accountId,
        pipelineId: p.id,
        runId: r.id,
        contactId: r.contactId,
        email: r.email,
        runStartedAt: r.startedAt,
      }
      if (await evaluateCondition(ctx.db, subject, g.properties.condition as Condition, now)) return g.id
    }
    return undefined
  }

  async function executeGroup(runs: ClaimedRun[], lease: Date): Promise<void> {
    const first = runs[0]!
    const pipeline = await pipelineById(ctx.db, first.pipelineId)
    const now = ctx.clock.now()
    const moves: RunMove[] = []
    const logs: LogEntry[] = []
    const stopOrEnd = (
      r: ClaimedRun,
      nodeId: string,
      cut: Cut,
      version: number,
      props: Record<string, unknown>,
    ) => {
      const reason = 'stop' in cut ? cut.stop : cut.end
      logs.push(
        logOf(pipeline!, r, nodeId, { ...props, ['stop' in cut ? 'stopped' : 'ended']: reason }, null),
      )
      moves.push({
        id: r.id,
        nodeId,
        dueAt: null,
        status: 'stop' in cut ? 'stopped' : 'ended',
        state: r.state,
        version,
        endReason: reason,
      })
    }
    if (!pipeline) {
      // Gone entirely (its account deleted): nothing to log under it.
      await ctx.db.transaction(async (tx) => {
        const ours = await lockClaimed(
          tx,
          runs.map((r) => r.id),
          lease,
        )
        const gone = runs.filter((r) => ours.has(r.id))
        await moveRuns(
          tx,
          gone.map((r) => ({
            id: r.id,
            nodeId: r.nodeId,
            dueAt: null,
            status: 'stopped',
            state: r.state,
            version: r.pipelineVersion,
            endReason: 'pipeline deleted',
          })),
          now,
        )
      })
      return
    }
    const nodeId = first.nodeId
    const node = pipeline.actions.find((n) => n.id === nodeId)
    const live: ClaimedRun[] = []
    const subjects: Map<number, Subject> = await loadSubjects(ctx.db, pipeline.listId, [
      ...new Set(runs.flatMap((r) => (r.contactId ? [r.contactId] : []))),
    ])
    const jumps: RunMove[] = []
    for (const r of runs) {
      if (pipeline.deletedAt) stopOrEnd(r, nodeId, { stop: 'pipeline deleted' }, r.pipelineVersion, {})
      else if (!node)
        // An edit removed the node this run was at (or it never existed): the run ends, logged.
        stopOrEnd(r, nodeId, { end: 'node removed' }, pipeline.version, {})
      else if (node.type !== 'mail' && subjects.get(r.contactId ?? 0)?.status !== 1)
        // Left the pipeline's list (or was deleted): the run stops at the next node it reaches.
        stopOrEnd(r, nodeId, { stop: 'unsubscribed' }, pipeline.version, {
          type: node.type,
          name: node.properties.name,
        })
      else {
        const goal = await goalMet(pipeline, node, r, now)
        if (goal)
          jumps.push({
            id: r.id,
            nodeId: goal,
            dueAt: now,
            status: 'active',
            state: r.state,
            version: pipeline.version,
            endReason: null,
          })
        else live.push(r)
      }
    }
    moves.push(...jumps)
    let outcomes = new Map<number, Outcome>()
    let prepared: Prepared = new Map()
    const executor = node ? EXECUTORS[node.type] : undefined
    const env: NodeEnv | undefined = node ? { ctx, now, pipeline, node, subjects, http } : undefined
    if (env && executor?.prepare && live.length) prepared = await executor.prepare(env, live)
    await ctx.db.transaction(async (tx) => {
      const ours = await lockClaimed(
        tx,
        runs.map((r) => r.id),
        lease,
      )
      const mine = live.filter((r) => ours.has(r.id))
      if (env && executor && mine.length) outcomes = await executor.execute(env, tx, mine, prepared)
      for (const r of mine) {
        const o = outcomes.get(r.id) ?? { props: { error: 'no outcome' } }
        const props = { type: node!.type, name: node!.properties.name, ...o.props }
        const state = o.state ?? r.state
        if (o.stay) {
          moves.push({
            id: r.id,
            nodeId,
            dueAt: o.stay,
            status: 'active',
            state,
            version: pipeline.version,
            endReason: null,
          })
          continue
        }
        if (o.end) {
          logs.push(logOf(pipeline, r, nodeId, props, null))
          moves.push({
            id: r.id,
            nodeId,
            dueAt: null,
            status: 'ended',
            state,
            version: pipeline.version,
            endReason: o.end,
          })
          continue
        }
        const next = nextIds(node!, o.port ?? 'default')
        logs.push(logOf(pipeline, r, nodeId, props, next))
        // A run is at one node: a node leading to several follows the first.
        const to = next[0]
        if (to === undefined)
          moves.push({
            id: r.id,
            nodeId,
            dueAt: null,
            status: 'ended',
            state,
            version: pipeline.version,
            endReason: 'end of branch',
          })
        else
          moves.push({
            id: r.id,
            nodeId: to,
            dueAt: o.dueAt ?? now,
            status: 'active',
            state,
            version: pipeline.version,
            endReason: null,
          })
      }
      const owned = moves.filter((m) => ours.has(m.id))
      const ownedLogs = logs.filter((l) => ours.has(l.runId))
      await insertLogEntries(tx, ownedLogs, now)
      await moveRuns(tx, owned, now)
    })
  }

  /** One round: claims a batch of due runs and executes it group by group; how many runs it claimed. */
  async function round(): Promise<number> {
    const now = ctx.clock.now()
    const lease = new Date(now.getTime() + ctx.config.automationLeaseSeconds * 1000)
    const claimed = await claimDueRuns(ctx.db, now, lease, batch)
    if (claimed.length === 0) return 0
    const groups = new Map<string, ClaimedRun[]>()
    for (const r of claimed) {
      const key = `${r.pipelineId}\u0000${r.nodeId}`
      const g = groups.get(key)
      if (g) g.push(r)
      else groups.set(key, [r])
    }
    // Large groups in slices, so the lanes share one busy node instead of one lane taking it all.
    const slice = Math.max(50, Math.ceil(claimed.length / parallel))
    const queue = [...groups.values()].flatMap((g) =>
      Array.from({ length: Math.ceil(g.length / slice) }, (_, i) => g.slice(i * slice, (i + 1) * slice)),
    )
    const lane = async () => {
      for (let g = queue.shift(); g; g = queue.shift()) {
        try {
          await executeGroup(g, lease)
        } catch (err) {
          // The group's lease brings it back after it runs out; nothing of it was committed.
          ctx.log.error({ err, pipelineId: g[0]!.pipelineId, nodeId: g[0]!.nodeId }, 'automation node')
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(parallel, queue.length) }, lane))
    return claimed.length
  }

  async function work(maxRounds: number): Promise<number> {
    let total = 0
    while (await consumeSignals(ctx)) {
      // drain the outbox first: runs it starts are due now
    }
    await scanDates()
    for (let i = 0; i < maxRounds; i++) {
      const n = await round()
      total += n
      if (n < batch) {
        // Executing nodes may have started runs (trigger nodes) or signals (tag, subscribe nodes).
        if ((await consumeSignals(ctx)) === 0 && n === 0) break
      }
    }
    return total
  }

  async function loop(): Promise<void> {
    if (stopped) return
    let busy = false
    try {
      const p = work(1)
      current = p.catch(() => undefined)
      busy = (await p) >= batch
    } catch (err) {
      ctx.log.error({ err }, 'automation engine loop')
    }
    if (!stopped) timer = setTimeout(() => void loop(), busy ? 0 : pollMs)
  }

  return {
    runOnce: (maxRounds = 1000) => work(maxRounds),
    start() {
      timer = setTimeout(() => void loop(), 0)
    },
    async stop() {
      stopped = true
      clearTimeout(timer)
      await current
    },
  }
}
