import { and, eq, isNull, sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
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

/** The account's active, not deleted pipelines started by a trigger of this type. */
export function activePipelinesFor(
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

/** Side effect: stores a new pipeline (already validated); its row. */
export async function insertPipeline(ex: Executor, p: NewPipeline): Promise<PipelineRow> {
  const [row] = await ex.insert(pipelines).values(p).returning()
  return row!
}
