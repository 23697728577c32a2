import { randomBytes } from 'node:crypto'
import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { isUniqueViolation } from '../../core/db/errors.js'
import { FieldErrorBag, validationFailed } from '../../core/http/errors.js'
import { ownListIds, requireList } from '../lists/index.js'
import { parseCondition, walkCondition, type Condition } from './condition.js'
import * as repo from './segments.repo.js'
import { toSegmentObject, type CreateSegmentInput } from './segments.schemas.js'

type Ctx = Pick<AppContext, 'db' | 'clock'>

/** Segments are counted in groups, so one statement never carries an unbounded number of parameters. */
const COUNT_BATCH = 10
const ID_ATTEMPTS = 3

/** 12 hex characters: short enough to type, 48 random bits (a clash is retried). */
const newSegmentId = () => randomBytes(6).toString('hex')

/** A stored filter was valid when written; one that no longer parses is a bug, not a client error. */
function storedCondition(filter: unknown, segmentId: string): Condition {
  const r = parseCondition(filter, 'filter')
  if (!r.ok) throw new Error(`segment ${segmentId} holds an invalid filter: ${JSON.stringify(r.errors)}`)
  return r.condition
}

/** `in_list` ids that are not lists of this account: reported at their paths beside the parser's errors. */
async function checkSegmentCondition(ex: Executor, accountId: number, cond: Condition, bag: FieldErrorBag) {
  const listRefs: { id: number; path: string }[] = []
  walkCondition(cond, 'filter', (c, path) => {
    if ('in_list' in c) listRefs.push({ id: c.in_list, path: `${path}.in_list` })
  })
  const own = await ownListIds(
    ex,
    accountId,
    listRefs.map((r) => r.id),
  )
  for (const ref of listRefs) {
    if (!own.has(ref.id)) bag.add(ref.path, 'The selected in_list is invalid.')
  }
}

async function counts(ctx: Ctx, accountId: number, listId: number, conds: Condition[]): Promise<number[]> {
  const now = ctx.clock.now()
  const out: number[] = []
  for (let i = 0; i < conds.length; i += COUNT_BATCH) {
    out.push(...(await repo.countMatches(ctx.db, accountId, listId, conds.slice(i, i + COUNT_BATCH), now)))
  }
  return out
}

async function insertWithFreshId(
  ctx: Ctx,
  values: { accountId: number; listId: number; name: string; filter: Condition },
): Promise<repo.SegmentRow> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await repo.insertSegment(ctx.db, { ...values, id: newSegmentId(), createdAt: ctx.clock.now() })
    } catch (err) {
      if (!isUniqueViolation(err) || attempt >= ID_ATTEMPTS) throw err
    }
  }
}

export function createSegmentService(ctx: Ctx) {
  return {
    async create(accountId: number, listId: number, input: CreateSegmentInput) {
      await requireList(ctx, accountId, listId)
      const bag = new FieldErrorBag()
      const name = input.name.trim()
      if (name === '') bag.add('name', 'The name field is required.')
      const parsed = parseCondition(input.filter, 'filter')
      if (parsed.ok) await checkSegmentCondition(ctx.db, accountId, parsed.condition, bag)
      else for (const [path, msgs] of Object.entries(parsed.errors)) msgs.forEach((m) => bag.add(path, m))
      if (!parsed.ok || !bag.empty) throw validationFailed(bag.errors)
      const filter = parsed.condition
      const row = await insertWithFreshId(ctx, { accountId, listId, name, filter })
      const [n] = await counts(ctx, accountId, listId, [filter])
      return toSegmentObject(row, n ?? 0)
    },
    async all(accountId: number, listId: number) {
      await requireList(ctx, accountId, listId)
      const rows = await repo.listSegments(ctx.db, accountId, listId)
      const n = await counts(
        ctx,
        accountId,
        listId,
        rows.map((r) => storedCondition(r.filter, r.id)),
      )
      return rows.map((r, i) => toSegmentObject(r, n[i] ?? 0))
    },
  }
}

/**
 * The account's segments among `ids`, in the order asked, with their parsed filters; unknown ids and other
 * accounts' segments are left out (the caller decides whether that is an error).
 */
export async function findSegments(
  ex: Executor,
  accountId: number,
  ids: string[],
): Promise<{ id: string; listId: number; filter: Condition }[]> {
  const rows = await repo.findSegmentRows(ex, accountId, [...new Set(ids)])
  const byId = new Map(rows.map((r) => [r.id, r]))
  const out: { id: string; listId: number; filter: Condition }[] = []
  for (const id of new Set(ids)) {
    const r = byId.get(id)
    if (r) out.push({ id: r.id, listId: r.listId, filter: storedCondition(r.filter, r.id) })
  }
  return out
}
