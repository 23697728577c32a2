import type { AppContext } from '../../core/context.js'
import { FieldErrorBag, notFound } from '../../core/http/errors.js'
import { redirectTarget } from '../../core/http/redirect-target.js'
import { flagOn } from '../../core/http/schemas.js'
import * as repo from './lists.repo.js'
import { toListDetail, toListObject, type ListInput, type ListRow } from './lists.schemas.js'

type Ctx = Pick<AppContext, 'db' | 'clock'>

/** The segments of a list as `GET /lists/{id}/segments` answers them (supplied by the segments module). */
export type SegmentsOf = (accountId: number, listId: number) => Promise<Record<string, unknown>[]>

/** The list's pages, by their wire and column names. */
const PAGES = [
  ['sub_success_page', 'subSuccessPage'],
  ['sub_confirmed_page', 'subConfirmedPage'],
  ['unsub_page', 'unsubPage'],
] as const

/**
 * The list's pages are where people are sent after signing up, confirming or unsubscribing (api.md: "string,
 * URL"): blank, or an absolute http(s) URL, `*|EMAIL|*` allowed in it. Anything else was stored and then never
 * used as a redirect, silently.
 */
function checkPages(input: ListInput, stored?: ListRow): void {
  const bag = new FieldErrorBag()
  for (const [field, column] of PAGES) {
    const page = input[field]
    // A value stored before the check existed, sent back unchanged (a client PUTs the list as GET showed it), is
    // left as it is: redirects skip it (lists.repo.ts, redirectTarget), and refusing it would refuse the update.
    if (stored && page === stored[column]) continue
    if (page?.trim() && !redirectTarget(page)) bag.add(field, `The ${field} format is invalid.`)
  }
  bag.throwIfAny()
}

function toColumns(input: ListInput): Partial<repo.NewList> {
  const out: Partial<repo.NewList> = {}
  if (input.name !== undefined) out.name = input.name.trim()
  if (input.from_name !== undefined) out.fromName = input.from_name
  if (input.from_email !== undefined) out.fromEmail = input.from_email.trim().toLowerCase()
  if (input.reply_to !== undefined) out.replyTo = input.reply_to.trim().toLowerCase()
  if (input.sub_success_page !== undefined) out.subSuccessPage = input.sub_success_page
  if (input.sub_confirmed_page !== undefined) out.subConfirmedPage = input.sub_confirmed_page
  if (input.unsub_page !== undefined) out.unsubPage = input.unsub_page
  if (input.double_optin !== undefined) out.doubleOptin = flagOn(input.double_optin)
  if (input.conf_subject !== undefined) out.confSubject = input.conf_subject
  if (input.conf_message !== undefined) out.confMessage = input.conf_message
  // `[]` is PHP's empty map (EmptyArray).
  if (input.custom_fields !== undefined)
    out.customFields = Array.isArray(input.custom_fields) ? {} : input.custom_fields
  return out
}

/** The list of this account, or the contract's 404 (another account's list looks exactly like a missing one). */
export async function requireList(
  ctx: Pick<AppContext, 'db'>,
  accountId: number,
  listId: number,
): Promise<ListRow> {
  const row = await repo.findList(ctx.db, accountId, listId)
  if (!row) throw notFound('List not found')
  return row
}

export function createListService(ctx: Ctx, segmentsOf: SegmentsOf = async () => []) {
  return {
    async create(accountId: number, input: ListInput & { name: string }) {
      checkPages(input)
      const row = await repo.insertList(ctx.db, accountId, { ...toColumns(input), name: input.name.trim() })
      return toListObject(row)
    },
    async all(accountId: number) {
      return (await repo.listLists(ctx.db, accountId)).map(toListObject)
    },
    async detail(accountId: number, listId: number) {
      const row = await requireList(ctx, accountId, listId)
      const counts = await repo.countByStatus(ctx.db, listId)
      return toListDetail(row, counts, await segmentsOf(accountId, listId))
    },
    async update(accountId: number, listId: number, input: ListInput) {
      checkPages(input, await requireList(ctx, accountId, listId))
      const row = await repo.updateList(ctx.db, accountId, listId, toColumns(input), ctx.clock.now())
      if (!row) throw notFound('List not found')
      return toListObject(row)
    },
    async remove(accountId: number, listId: number) {
      if (!(await repo.deleteList(ctx.db, accountId, listId))) throw notFound('List not found')
      return { deleted: true }
    },
  }
}
