import { and, eq, inArray, isNull, sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { isSignalKind, setSignalListener } from '../signals/index.js'
import { pipelines } from './pipelines.table.js'
import type { TriggerType } from './pipeline-graph.js'

export type PipelineRow = typeof pipelines.$inferSelect
export type NewPipeline = typeof pipelines.$inferInsert

/** A pipeline of the account, not deleted. */
export async function findPipeline(
  ex: Executor,
  accountId: number,
  id: number,
): Promise<PipelineRow | undefined> {
  const [row] = await ex
    .select()
    .from(pipelines)
    .where(and(eq(pipelines.id, id), eq(pipelines.accountId, accountId), isNull(pipelines.deletedAt)))
  return row
}

/** A pipeline by id whatever its account, deleted ones too (the engine reads the graph of a run with it). */
export async function pipelineById(ex: Executor, id: number): Promise<PipelineRow | undefined> {
  const [row] = await ex.select().from(pipelines).where(eq(pipelines.id, id))
  return row
}

/**
 * The account's active, not deleted pipelines started by a trigger of this type. Async on purpose: drizzle's
 * query builder is a thenable that runs its statement at every `await`, so a caller that keeps the result
 * to await again (the signal consumer, once per signal of a batch) must be given a real promise.
 */
export async function activePipelinesFor(
  ex: Executor,
  accountId: number,
  type: TriggerType,
): Promise<PipelineRow[]> {
  return ex
    .select()
    .from(pipelines)
    .where(
      and(
        eq(pipelines.accountId, accountId),
        eq(pipelines.status, 'active'),
        isNull(pipelines.deletedAt),
        sql`${pipelines.trigger}->>'type' = ${type}`,
      ),
    )
    .orderBy(pipelines.id)
}

/**
 * Side effect, in the transaction that wrote the pipeline: what it listens for from now on (the signals module
 * writes a signal only when some active pipeline of the account listens for its kind).
 */
async function listen(ex: Executor, row: PipelineRow): Promise<void> {
  const kind = row.trigger.type
  const listens = row.status === 'active' && row.deletedAt === null && isSignalKind(kind)
  await setSignalListener(ex, row.id, row.accountId, listens ? kind : undefined)
}

/** Side effect: stores a new pipeline (already validated) and what it listens for; its row. */
export async function insertPipeline(ex: Executor, p: NewPipeline): Promise<PipelineRow> {
  return ex.transaction(async (tx) => {
    const [row] = await tx.insert(pipelines).values(p).returning()
    await listen(tx, row!)
    return row!
  })
}

/** The account's pipelines, not deleted, oldest first. */
export async function listPipelines(ex: Executor, accountId: number): Promise<PipelineRow[]> {
  return ex
    .select()
    .from(pipelines)
    .where(and(eq(pipelines.accountId, accountId), isNull(pipelines.deletedAt)))
    .orderBy(pipelines.id)
}

/** Which of `ids` are pipelines of the account, not deleted. */
export async function ownPipelineIds(ex: Executor, accountId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set()
  const rows = await ex
    .select({ id: pipelines.id })
    .from(pipelines)
    .where(and(eq(pipelines.accountId, accountId), inArray(pipelines.id, ids), isNull(pipelines.deletedAt)))
  return new Set(rows.map((r) => r.id))
}

export type PipelineValues = Pick<
  NewPipeline,
  'name' | 'listId' | 'status' | 'trigger' | 'reentry' | 'start' | 'actions'
>

/**
 * Side effect: replaces the pipeline's definition and bumps `version` in the same statement, so a run can
 * always tell which graph it started on. Undefined when there is no such pipeline (or it is deleted).
 */
export async function updatePipeline(
  ex: Executor,
  accountId: number,
  id: number,
  values: PipelineValues,
  now: Date,
): Promise<PipelineRow | undefined> {
  return ex.transaction(async (tx) => {
    const [row] = await tx
      .update(pipelines)
      .set({ ...values, version: sql`${pipelines.version} + 1`, updatedAt: now })
      .where(and(eq(pipelines.id, id), eq(pipelines.accountId, accountId), isNull(pipelines.deletedAt)))
      .returning()
    if (row) await listen(tx, row)
    return row
  })
}

/**
 * Side effect: marks the pipeline deleted (its row stays for logs and statistics), listening for nothing; false
 * when absent.
 */
export async function softDeletePipeline(
  ex: Executor,
  accountId: number,
  id: number,
  now: Date,
): Promise<boolean> {
  return ex.transaction(async (tx) => {
    const [row] = await tx
      .update(pipelines)
      .set({ deletedAt: now, updatedAt: now })
      .where(and(eq(pipelines.id, id), eq(pipelines.accountId, accountId), isNull(pipelines.deletedAt)))
      .returning()
    if (row) await listen(tx, row)
    return row !== undefined
  })
}
