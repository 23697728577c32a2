import { createRequire } from 'node:module'
import PgBoss from 'pg-boss'
import type { DbHandle, Executor } from '../db/client.js'
import { positionalSql } from '../db/sql.js'

/**
 * Job names and their payloads. Modules add their own entries by declaration merging:
 *   declare module '../../core/jobs/queue.js' { interface JobMap { 'x.y': { id: number } } }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the modules, by declaration merging
export interface JobMap {}

export type JobName = keyof JobMap & string
export type JobHandler<N extends JobName> = (
  data: JobMap[N],
  meta: { id: string; retryCount: number },
) => Promise<void>

export interface SendOptions {
  /** Enqueue inside this transaction, so the job exists exactly when the state change commits. */
  tx?: Executor
  startAfterSeconds?: number
  retryLimit?: number
  singletonKey?: string
}

export interface JobQueue {
  /** Starts pg-boss and creates every queue named, so no enqueue inside a transaction has to create one. */
  start(queues?: readonly string[]): Promise<void>
  stop(): Promise<void>
  send<N extends JobName>(name: N, data: JobMap[N], opts?: SendOptions): Promise<string | null>
  /**
   * Runs `handler` for each job, fetched `batchSize` at a time; the jobs of one fetch run `concurrency` at a
   * time. After a fetch that came back short, pg-boss sleeps out its polling interval (0.5 s unless
   * `pollingIntervalSeconds` says otherwise, at least 0.5); after a full
   * one, the next fetch follows at once. When any job of a fetch fails, pg-boss retries that whole fetch:
   * handlers must be safe to run again (ours skip work that is already done). A fetch is done when its last
   * job is: one slow job holds up the jobs fetched with it and the next fetch. `workers` fetch independently
   * (default 1), for jobs of unbounded length (downloads from other people's servers), one at a time each.
   */
  work<N extends JobName>(name: N, handler: JobHandler<N>, opts?: WorkOptions): Promise<void>
}

interface WorkOptions {
  batchSize?: number
  concurrency?: number
  pollingIntervalSeconds?: number
  workers?: number
}

const SCHEMA = 'pgboss'

/** pg-boss's own SQL text for completing and failing the jobs of a fetch (its internal plans module). */
const plans = createRequire(import.meta.url)('pg-boss/src/plans.js') as {
  completeJobs(schema: string): string
  failJobsById(schema: string): string
}
const UNAWAITED = new Set([plans.completeJobs(SCHEMA), plans.failJobsById(SCHEMA)])

export function createJobQueue(handle: DbHandle, onError: (err: Error) => void): JobQueue {
  // pg-boss completes and fails a fetch's jobs without awaiting it, so its own stop() can return while that
  // query still runs; stop() below waits for every query pg-boss started before the database may close.
  // Those same two calls also drop their promise, so a database that fails them (a restart, a dropped
  // connection) would end the process with an unhandled rejection. Their failure is reported and read as
  // "no job changed": the jobs stay active and pg-boss retries them once they expire, which our handlers allow.
  const inflight = new Set<Promise<unknown>>()
  const executeSql = (text: string, values?: unknown[]) => {
    const query = handle.executeSql(text, values)
    inflight.add(query)
    void query.then(
      () => inflight.delete(query),
      () => inflight.delete(query),
    )
    if (!UNAWAITED.has(text)) return query
    return query.catch((err: unknown) => {
      onError(err instanceof Error ? err : new Error(String(err)))
      return { rows: [{ count: 0 }] }
    })
  }
  const boss = new PgBoss({
    db: { executeSql },
    schema: SCHEMA,
    // Maintenance and monitoring are light; one worker process per installation is enough to run them, but
    // pg-boss coordinates this itself with advisory locks, so every process may start it.
    supervise: true,
  })
  boss.on('error', onError)
  const created = new Set<string>()
  let started = false

  async function ensureQueue(name: string): Promise<void> {
    if (created.has(name)) return
    await boss.createQueue(name, { name, retryLimit: 5, retryDelay: 10, retryBackoff: true })
    created.add(name)
  }

  async function workOne<N extends JobName>(
    name: N,
    handler: JobHandler<N>,
    opts: WorkOptions,
  ): Promise<void> {
    const batchSize = opts.batchSize ?? 1
    // Known once work() returns; the handler first runs after a fetch, later.
    const worker = { id: '' }
    worker.id = await boss.work<JobMap[typeof name]>(
      name,
      { batchSize, pollingIntervalSeconds: opts.pollingIntervalSeconds ?? 0.5, includeMetadata: true },
      async (jobs) => {
        const queue = [...jobs]
        const errors: unknown[] = []
        const lanes = Array.from({ length: Math.min(opts.concurrency ?? 1, queue.length) }, async () => {
          for (let job = queue.shift(); job; job = queue.shift()) {
            await handler(job.data, { id: job.id, retryCount: job.retryCount }).catch((err: unknown) => {
              errors.push(err)
            })
          }
        })
        await Promise.all(lanes)
        // A full fetch means more jobs are likely waiting: fetch again at once rather than sleep out the
        // polling interval, which would cap a queue at batchSize jobs per half second.
        if (jobs.length >= batchSize && worker.id) boss.notifyWorker(worker.id)
        if (errors.length) throw errors[0]
      },
    )
  }

  return {
    async start(queues = []) {
      await boss.start()
      started = true
      for (const q of queues) await ensureQueue(q)
    },
    async stop() {
      if (started) await boss.stop({ graceful: true, wait: true, timeout: 10_000 })
      started = false
      for (let round = 0; round < 10 && inflight.size; round++) await Promise.allSettled([...inflight])
    },
    async send(name, data, opts = {}) {
      // Creating a queue inside a caller's open transaction would wait for that very transaction on PGlite
      // (one connection), so queues used with `tx` must be declared by their module and created at start.
      if (opts.tx && !created.has(name)) throw new Error(`job queue "${name}" is not declared by any module`)
      await ensureQueue(name)
      const options: PgBoss.SendOptions & { db?: PgBoss.Db } = {}
      if (opts.startAfterSeconds) options.startAfter = opts.startAfterSeconds
      if (opts.retryLimit !== undefined) options.retryLimit = opts.retryLimit
      if (opts.singletonKey) options.singletonKey = opts.singletonKey
      const tx = opts.tx
      if (tx) {
        options.db = {
          executeSql: async (text: string, values?: unknown[]) =>
            (await tx.execute(positionalSql(text, values))) as unknown as { rows: unknown[] },
        }
      }
      return boss.send(name, data as object, options)
    },
    async work(name, handler, opts = {}) {
      await ensureQueue(name)
      for (let n = 0; n < (opts.workers ?? 1); n++) await workOne(name, handler, opts)
    },
  }
}
