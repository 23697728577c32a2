import type { AppContext } from '../../core/context.js'
import { createBatcher } from '../../core/db/batcher.js'
import { lastPage, nextPageUrl, toPage } from '../../core/db/pagination.js'
import { normalizeEmail } from '../../core/http/email.js'
import { notFound, subscriberNotInList } from '../../core/http/errors.js'
import { requireList } from '../lists/index.js'
import { listPageEntriesJson } from './list-page.json.js'
import { countListMembers, listPageRows } from './list-page.repo.js'
import { findListMembersByEmail, type MemberKey } from './member-lookup.repo.js'
import * as repo from './subscribers.read.repo.js'
import { DEFAULT_LIST_PAGE, type ListPageQueryT } from './subscribers.read.schemas.js'
import { STATUS_FILTERS, toGlobalSubscriber, toSubscriberDetail } from './subscribers.schemas.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'config'>

/** As for tracking hits: a batch is whatever arrived together; two in flight keep the database busy. */
const LOOKUP_BATCHES = { maxBatch: 200, maxInFlight: 2 }

export function createSubscriberReadService(ctx: Ctx) {
  const { db } = ctx
  // Shop plugins look subscribers up by the thousand: lookups arriving together share one statement.
  const lookUp = createBatcher(
    (keys: MemberKey[]) => findListMembersByEmail(ctx.dbHandle, keys),
    LOOKUP_BATCHES,
  )
  return {
    /**
     * `GET /lists/{id}/subscribers`: one page of the members with one status, and how many there are, as JSON
     * text written straight from the rows (list-page.json.ts): the largest read of the API. `next_page_url`
     * (not in api.md; Laravel's paginator has it, and clients page until it is null) is absolute under
     * PUBLIC_URL, as stats-detail's, with this request's per_page and status.
     */
    async listPage(accountId: number, listId: number, query: ListPageQueryT): Promise<string> {
      await requireList(ctx, accountId, listId)
      const status = STATUS_FILTERS[query.status || 'subscribed']
      const page = toPage(query.page, query.per_page, DEFAULT_LIST_PAGE)
      const [rows, total] = await Promise.all([
        listPageRows(db, listId, status, page.perPage, page.offset),
        countListMembers(db, listId, status),
      ])
      const last = lastPage(total, page.perPage)
      const data = listPageEntriesJson(rows)
      const next = nextPageUrl(`${ctx.config.publicUrl}/lists/${listId}/subscribers`, page, total, {
        per_page: String(page.perPage),
        status: query.status || undefined,
      })
      return (
        `{"current_page":${page.page},"data":${data},"per_page":${page.perPage},"total":${total},` +
        `"last_page":${last},"next_page_url":${JSON.stringify(next)}}`
      )
    },

    /** `GET /lists/{id}/subscriber/{email}` */
    async byEmail(accountId: number, listId: number, email: string) {
      const found = await lookUp({ accountId, listId, email: normalizeEmail(email) })
      if (!found.listFound) throw notFound('List not found')
      if (!found.member) throw subscriberNotInList()
      return { subscriber: toSubscriberDetail(found.member.c, found.member.m) }
    },

    /** `GET /lists/{id}/subscriber-by-phone/{phone}`: spaces do not count on either side. */
    async byPhone(accountId: number, listId: number, phone: string) {
      await requireList(ctx, accountId, listId)
      const wanted = phone.replaceAll(' ', '')
      const row = wanted ? await repo.findMemberByPhone(db, accountId, listId, wanted) : undefined
      if (!row) throw subscriberNotInList()
      return { subscriber: toSubscriberDetail(row.c, row.m) }
    },

    /** `GET /subscribers/{email}`: the person with every list of this account they are in. */
    async global(accountId: number, email: string) {
      const contact = await repo.findContactByEmail(db, accountId, normalizeEmail(email))
      if (!contact) throw notFound('Subscriber not found')
      const ms = await repo.membershipsOf(db, contact.id)
      return { subscriber: toGlobalSubscriber(contact, ms) }
    },
  }
}
