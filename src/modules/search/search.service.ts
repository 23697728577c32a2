import type { AppContext } from '../../core/context.js'
import { toPage } from '../../core/db/pagination.js'
import { fieldError } from '../../core/http/errors.js'
import { toGlobalSubscriber, type MembershipRow } from '../subscribers/index.js'
import * as repo from './search.repo.js'
import { DEFAULT_SEARCH_PAGE, type SearchInput } from './search.schemas.js'

/** Search (contract §3): people of the account by the start of their email, name, surname or phone. */
export function createSearchService(ctx: Pick<AppContext, 'db'>) {
  const { db } = ctx
  return {
    async search(accountId: number, input: SearchInput) {
      // Blank is missing, as Laravel's `required` rule has it: a search for nothing would list everyone.
      const query = input.query.trim()
      if (!query) throw fieldError('query', 'The query field is required.')
      const page = toPage(input.page, input.per_page, DEFAULT_SEARCH_PAGE)
      const [people, total] = await Promise.all([
        repo.searchContacts(db, accountId, query, page.perPage, page.offset),
        repo.countMatches(db, accountId, query),
      ])
      const ms = await repo.membershipsOfContacts(
        db,
        people.map((c) => c.id),
      )
      const byContact = new Map<number, MembershipRow[]>()
      for (const m of ms) {
        const list = byContact.get(m.contactId)
        if (list) list.push(m)
        else byContact.set(m.contactId, [m])
      }
      return { data: people.map((c) => toGlobalSubscriber(c, byContact.get(c.id) ?? [])), total }
    },
  }
}
