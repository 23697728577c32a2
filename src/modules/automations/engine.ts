import { retryOnConflict } from '../../core/db/retry.js'
import { createOutboundHttp, type OutboundHttp } from '../../core/net/outbound.js'
import { wakeSenders } from '../delivery/index.js'
import { nextIds, pipelineById, type PipelineNode, type PipelineRow } from '../pipelines/index.js'
import { loadSubjects, type Subject } from './node-effects.repo.js'
import { paused } from './run-chain.js'
import {
  EXECUTORS,
  goalsPassed,
  MAIL_SKIPPED,
  type EngineCtx,
  type NodeEnv,
  type Outcome,
  type Prepared,
} from './nodes.js'
import {
  claimDueRuns,
  activeBranches,
  branchGoals,
  insertBranches,
  insertLogEntries,
  lockClaimed,
  lockTriggers,
  moveRuns,
  type BranchGoals,
  type ClaimedRun,
  type NewBranch,
  type LogEntry,
  type RunMove,
} from './runs.repo.js'
import { createGoalWatch } from './goal-watch.js'
import { firstGoalsMet } from './goals-met.js'
import { consumeSignals, createDateScanner } from './triggers.js'
import { logRoundFailure } from '../../core/round-failure.js'

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

/**
 * Active runs one trigger may have at once. A node whose port lists several ids forks the run (api.md: `next`
 * holds the ids of the follow-up nodes): the run goes on to the first, a branch starts at each other one; a
 * fork past this many is logged (`branches_dropped`) and not started.
 */
export const MAX_BRANCHES = 20

/** Why a branch ends when another branch of its trigger met a goal first. */
const GOAL_ELSEWHERE = 'goal met in another branch'

/**
 * Whether the run goes on at a node other than mail: its subscriber is subscribed to the pipeline's list, or
 * still in it (unsubscribed, bounced) on the way a mail node sent it for that (`quarantine_skip`, MAIL_SKIPPED).
 */
const stillFollowed = (r: ClaimedRun, s: Subject | undefined) =>
  s?.status === 1 || (s !== undefined && s.status !== null && r.state[MAIL_SKIPPED] === true)

/** A run that forked or was forked: its goals are its trigger's. */
const isBranch = (r: ClaimedRun) => r.rootId !== r.id || r.state.branched === true
const rootsOf = (runs: ClaimedRun[]) => [...new Set(runs.map((r) => r.rootId))]

/** Another branch of r's trigger met a goal r has not passed (r is on a path the trigger has left). */
function goalMetElsewhere(r: ClaimedRun, shared: BranchGoals[]): boolean {
  const passed = goalsPassed(r.state)
  return shared.some((b) => b.root === r.rootId && b.id !== r.id && b.met.some((g) => !passed.includes(g)))
}

/**
 * When the goal watch made the run due early (goal-watch.ts), the time it was due before (epoch ms), taken out
 * of its state: the run carries it no further than this execution.
 */
function takeWokenFrom(r: ClaimedRun): number | undefined {
  const { wokenFrom, ...rest } = r.state
  if (wokenFrom === undefined) return undefined
  r.state = rest
  return Number(wokenFrom)
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
  // SMS_GATEWAY_URL is the operator's own setting, often a service inside their network: the guard against
  // customers' URLs reaching private addresses is not for it (it refused a gateway on 127.0.0.1).
  const operatorHttp = opts.http ?? createOutboundHttp({ allowPrivateNetwork: true })
  const scanDates = createDateScanner(ctx)
  const watchGoals = createGoalWatch(ctx)
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
    runId: r.rootId,
    actionId: node,
    email: r.email,
    props,
    next,
  })

  /** The goal each run jumps to (firstGoalsMet); none for runs at a goal already, which checks its own. */
  const goalJumps = (p: PipelineRow, node: PipelineNode, runs: ClaimedRun[], now: Date) =>
    node.type === 'goal' ? Promise.resolve(new Map<number, string>()) : firstGoalsMet(ctx.db, p, runs, now)

  async function executeGroup(runs: ClaimedRun[], lease: Date): Promise<void> {
    const first = runs[0]!
    const pipeline = await pipelineById(ctx.db, first.pipelineId)
    const now = ctx.clock.now()
    const moves: RunMove[] = []
    /** Each entry with the run that wrote it (a branch logs under its trigger's id). */
    const logs: { owner: number; entry: LogEntry }[] = []
    const log = (r: ClaimedRun, nodeId: string, props: Record<string, unknown>, next: string[] | null) =>
      logs.push({ owner: r.id, entry: logOf(pipeline!, r, nodeId, props, next) })
    const stopOrEnd = (
      r: ClaimedRun,
      nodeId: string,
      cut: Cut,
      version: number,
      props: Record<string, unknown>,
    ) => {
      const reason = 'stop' in cut ? cut.stop : cut.end
      log(r, nodeId, { ...props, ['stop' in cut ? 'stopped' : 'ended']: reason }, null)
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
    const eligible: ClaimedRun[] = []
    const wokenAt = new Map<number, number>()
    for (const r of runs) {
      const woken = takeWokenFrom(r)
      if (woken !== undefined) wokenAt.set(r.id, woken)
    }
    for (const r of runs) {
      if (pipeline.deletedAt) stopOrEnd(r, nodeId, { stop: 'pipeline deleted' }, r.pipelineVersion, {})
      else if (!node)
        // An edit removed the node this run was at (or it never existed): the run ends, logged.
        stopOrEnd(r, nodeId, { end: 'node removed' }, pipeline.version, {})
      else if (node.type !== 'mail' && !stillFollowed(r, subjects.get(r.contactId ?? 0)))
        // Left the pipeline's list (or was deleted): the run stops at the next node it reaches.
        stopOrEnd(r, nodeId, { stop: 'unsubscribed' }, pipeline.version, {
          type: node.type,
          name: node.properties.name,
        })
      else eligible.push(r)
    }
    // Branches of one trigger share its goals: a branch ends once another branch met a goal it has not passed.
    const branched = eligible.filter(isBranch)
    const shared = branched.length ? await branchGoals(ctx.db, rootsOf(branched)) : []
    const open: ClaimedRun[] = []
    for (const r of eligible) {
      if (isBranch(r) && goalMetElsewhere(r, shared))
        stopOrEnd(r, nodeId, { end: GOAL_ELSEWHERE }, pipeline.version, {
          type: node!.type,
          name: node!.properties.name,
        })
      else open.push(r)
    }
    const goalOf = node ? await goalJumps(pipeline, node, open, now) : new Map<number, string>()
    const jumpers = open.filter((r) => goalOf.has(r.id))
    for (const r of open) {
      if (goalOf.has(r.id)) continue
      // Woken for a goal it no longer meets (it changed since the sweep): back to its wait, as if never woken.
      if ((wokenAt.get(r.id) ?? 0) > now.getTime())
        moves.push({
          id: r.id,
          nodeId: r.nodeId,
          dueAt: new Date(wokenAt.get(r.id)!),
          status: 'active',
          state: r.state,
          version: pipeline.version,
          endReason: null,
        })
      else live.push(r)
    }
    let outcomes = new Map<number, Outcome>()
    let prepared: Prepared = new Map()
    const executor = node ? EXECUTORS[node.type] : undefined
    const env: NodeEnv | undefined = node
      ? { ctx, now, pipeline, node, subjects, http, operatorHttp }
      : undefined
    if (env && executor?.prepare && live.length) prepared = await executor.prepare(env, live)
    await ctx.db.transaction(async (tx) => {
      const ours = await lockClaimed(
        tx,
        runs.map((r) => r.id),
        lease,
      )
      const mine = live.filter((r) => ours.has(r.id))
      // Goal jumps; a branch's jump is decided again under its trigger's lock: of two branches of one trigger
      // meeting a goal, or a branch meeting one another branch is at, one jumps and the other ends.
      const branchJumpers = jumpers.filter((r) => isBranch(r) && ours.has(r.id))
      let sharedNow: BranchGoals[] = []
      if (branchJumpers.length) {
        await lockTriggers(tx, rootsOf(branchJumpers))
        sharedNow = await branchGoals(tx, rootsOf(branchJumpers))
      }
      const jumped = new Set<string>()
      for (const r of jumpers) {
        const goal = goalOf.get(r.id)!
        if (isBranch(r)) {
          const key = `${r.rootId}:${goal}`
          const there = sharedNow.some(
            (b) => b.root === r.rootId && b.id !== r.id && (b.activeAt === goal || b.met.includes(goal)),
          )
          if (there || jumped.has(key)) {
            stopOrEnd(r, nodeId, { end: GOAL_ELSEWHERE }, pipeline.version, {
              type: node!.type,
              name: node!.properties.name,
              goal,
            })
            continue
          }
          jumped.add(key)
        }
        moves.push({
          id: r.id,
          nodeId: goal,
          dueAt: now,
          status: 'active',
          state: r.state,
          version: pipeline.version,
          endReason: null,
        })
      }
      if (env && executor && mine.length) outcomes = await executor.execute(env, tx, mine, prepared)
      // Several ids in the port taken: the run goes on to the first, and a branch starts at each other one.
      const nextOf = new Map<number, string[]>()
      for (const r of mine) {
        const o = outcomes.get(r.id)
        if (!o?.stay && !o?.end) nextOf.set(r.id, [...new Set(nextIds(node!, o?.port ?? 'default'))])
      }
      const forking = mine.filter((r) => (nextOf.get(r.id)?.length ?? 0) > 1)
      const active = await activeBranches(tx, rootsOf(forking))
      const branches: NewBranch[] = []
      for (const r of mine) {
        const o = outcomes.get(r.id) ?? { props: { error: 'no outcome' } }
        const props = { type: node!.type, name: node!.properties.name, ...o.props }
        // A run due later pauses, which ends the chain of runs it is in (run-chain.ts).
        const dueAt = o.stay ?? o.dueAt ?? now
        const state = dueAt > now ? paused(o.state ?? r.state) : (o.state ?? r.state)
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
          log(r, nodeId, props, null)
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
        const next = nextOf.get(r.id) ?? []
        // At most MAX_BRANCHES active runs per trigger (a fork inside a loop with a wait would grow without end).
        const count = active.get(r.rootId) ?? 1
        const room = Math.max(0, MAX_BRANCHES - count)
        const started = next.slice(1, 1 + room)
        const dropped = next.slice(1 + room)
        active.set(r.rootId, count + started.length)
        const onState = started.length ? { ...state, branched: true } : state
        for (const id of started) branches.push({ parentId: r.id, nodeId: id, dueAt, state: onState })
        log(r, nodeId, dropped.length ? { ...props, branches_dropped: dropped } : props, next)
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
            dueAt,
            status: 'active',
            state: onState,
            version: pipeline.version,
            endReason: null,
          })
      }
      const owned = moves.filter((m) => ours.has(m.id))
      const ownedLogs = logs.filter((l) => ours.has(l.owner)).map((l) => l.entry)
      await insertLogEntries(tx, ownedLogs, now)
      await moveRuns(tx, owned, now)
      await insertBranches(tx, branches)
    })
    // Committed: the sender of this process sends the node's mail now, not on its next idle poll.
    if (node?.type === 'mail' && [...outcomes.values()].some((o) => o.props.message_id !== undefined))
      wakeSenders(ctx)
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
          // PostgreSQL aborts a group's transaction now and then to break a deadlock with a concurrent write of
          // the same contacts (a tag node beside a bulk import): nothing of it committed, and it runs again now
          // rather than a lease later. Its effects outside the database (a webhook node's request) happen again
          // either way, as after any failure of the group.
          await retryOnConflict(() => executeGroup(g, lease))
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
    await watchGoals()
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
      logRoundFailure(ctx.log, err, 'automation engine loop')
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
