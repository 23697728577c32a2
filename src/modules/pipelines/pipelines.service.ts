import type { AppContext } from '../../core/context.js'
import { retryOnConflict } from '../../core/db/retry.js'
import { HttpError, notFound, validationFailed } from '../../core/http/errors.js'
import { ownListIds } from '../lists/index.js'
import { requireTemplate } from '../templates/index.js'
import { validatePipeline, type RefLookup, type ValidPipeline } from './pipeline-validate.js'
import * as repo from './pipelines.repo.js'
import { toNodeObject, toPipelineObject, toPipelineSummary, type PipelineBody } from './pipelines.schemas.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'config'>

const pipelineNotFound = () => notFound('Pipeline not found')

/** Which records a graph names exist in the account. */
function lookupFor(ctx: Ctx, accountId: number): RefLookup {
  return {
    async templates(ids) {
      const found = new Set<number>()
      // Graphs name few distinct templates; the templates module answers one at a time.
      for (const id of ids) {
        try {
          await requireTemplate(ctx, accountId, id)
          found.add(id)
        } catch (err) {
          if (!(err instanceof HttpError && err.statusCode === 404)) throw err
        }
      }
      return found
    },
    lists: (ids) => ownListIds(ctx.db, accountId, ids),
    pipelines: (ids) => repo.ownPipelineIds(ctx.db, accountId, ids),
  }
}

/** The body checked in full against the account; the contract's 422 otherwise. */
async function requireValid(
  ctx: Ctx,
  accountId: number,
  body: unknown,
  update?: { given: ReadonlySet<string>; current: repo.PipelineRow },
): Promise<ValidPipeline> {
  const r = await validatePipeline(body, lookupFor(ctx, accountId), update?.given, {
    allowPrivateNetwork: ctx.config.allowPrivateNetwork,
    storedNodes: update && new Map(update.current.actions.map((n) => [n.id, n])),
  })
  if (!r.ok) throw validationFailed(r.errors)
  return r.pipeline
}

/** The stored pipeline in the wire form of the body, so a partial PUT can be judged as a whole. */
function bodyOf(row: repo.PipelineRow): Record<string, unknown> {
  return {
    name: row.name,
    list_id: row.listId,
    status: row.status,
    trigger: row.trigger,
    reentry: row.reentry,
    start: row.start,
    actions: row.actions,
  }
}

export function createPipelineService(ctx: Ctx) {
  async function requirePipeline(accountId: number, id: number) {
    const row = await repo.findPipeline(ctx.db, accountId, id)
    if (!row) throw pipelineNotFound()
    return row
  }
  return {
    async create(accountId: number, body: PipelineBody) {
      const p = await requireValid(ctx, accountId, body)
      const now = ctx.clock.now()
      // Each write is one transaction of the database's alone: run again after a deadlock (retry.ts).
      const row = await retryOnConflict(() =>
        repo.insertPipeline(ctx.db, { ...p, accountId, createdAt: now, updatedAt: now }),
      )
      return toPipelineObject(row)
    },
    async all(accountId: number) {
      return (await repo.listPipelines(ctx.db, accountId)).map(toPipelineSummary)
    },
    async one(accountId: number, id: number) {
      return toPipelineObject(await requirePipeline(accountId, id))
    },
    async update(accountId: number, id: number, body: PipelineBody) {
      const current = await requirePipeline(accountId, id)
      const merged: Record<string, unknown> = { ...bodyOf(current), ...body }
      // New actions without a start begin at their first node, as on create.
      if (body.actions !== undefined && body.start === undefined) delete merged.start
      const p = await requireValid(ctx, accountId, merged, { given: new Set(Object.keys(body)), current })
      const row = await retryOnConflict(() => repo.updatePipeline(ctx.db, accountId, id, p, ctx.clock.now()))
      if (!row) throw pipelineNotFound()
      return toPipelineObject(row)
    },
    async remove(accountId: number, id: number) {
      const deleted = await retryOnConflict(() =>
        repo.softDeletePipeline(ctx.db, accountId, id, ctx.clock.now()),
      )
      if (!deleted) throw pipelineNotFound()
      return { deleted: true }
    },
    async actions(accountId: number, id: number) {
      return { data: (await requirePipeline(accountId, id)).actions.map(toNodeObject) }
    },
    async action(accountId: number, id: number, actionId: string) {
      const node = (await requirePipeline(accountId, id)).actions.find((n) => n.id === actionId)
      if (!node) throw notFound('Action not found')
      return { data: toNodeObject(node) }
    },
  }
}
