import type { Executor } from '../../core/db/client.js'
import { nextPageUrl, toPage } from '../../core/db/pagination.js'
import { normalizeEmail } from '../../core/http/email.js'
import { scopeDetailPage, type DetailRow, type StatsScope } from './scope-stats.repo.js'
import { DEFAULT_STATS_DETAIL_PAGE, type StatsDetailQueryT } from './scope-stats.schemas.js'

/**
 * A `stats-detail` answer (campaigns' and automations' alike): `per_page` of the scope's recipients (default
 * 100, at most 5000) with their event counts, in recipient order, and `next_page_url`, absolute under
 * PUBLIC_URL (the address clients reach the service at; a request's Host can be an internal one behind a
 * proxy) carrying this request's filters. `from` is the query's from_date, checked by the caller.
 */
export async function readStatsDetail(
  ex: Executor,
  scope: StatsScope,
  query: StatsDetailQueryT,
  from: Date | undefined,
  /** The endpoint's absolute URL, without query. */
  url: string,
  /** Only these recipients (a POST's `emails`); the pages of `next_page_url` are of the same list. */
  emails?: string[],
) {
  const page = toPage(query.page, query.per_page, DEFAULT_STATS_DETAIL_PAGE)
  const email = query.email === undefined ? undefined : normalizeEmail(query.email)
  const { rows, total } = await scopeDetailPage(
    ex,
    scope,
    { email, emails: emails && [...new Set(emails.map(normalizeEmail))], event: query.event, from },
    page.perPage,
    page.offset,
  )
  const subscribers: Record<string, Omit<DetailRow, 'email'>> = {}
  for (const { email: address, ...counts } of rows) subscribers[address] = counts
  const next = nextPageUrl(url, page, total, {
    per_page: page.perPage !== DEFAULT_STATS_DETAIL_PAGE ? String(page.perPage) : undefined,
    email,
    event: query.event,
    from_date: query.from_date ? query.from_date.trim() : undefined,
  })
  return { total, per_page: page.perPage, next_page_url: next, subscribers }
}
