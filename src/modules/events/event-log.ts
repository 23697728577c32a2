import type { Executor } from '../../core/db/client.js'
import { lastPage, toPage } from '../../core/db/pagination.js'
import { fieldError } from '../../core/http/errors.js'
import {
  DEFAULT_EMAIL_LOG_PAGE,
  EVENT_TYPES,
  toEmailLogEntry,
  type CampaignLogQueryT,
} from './event-log.schemas.js'
import { campaignEventsPage } from './events.repo.js'
import type { EventType } from './events.table.js'

const KNOWN = new Set<string>(EVENT_TYPES)
const isEventType = (v: string): v is EventType => KNOWN.has(v)

/**
 * The `events` filter as event types; null when none is asked for ('' is a form's "not chosen"). Complaints
 * are recorded as `spam_complaint`, so `spam` asks for those too (as stats-detail's `spam` counts both).
 */
export function eventFilter(values: string[] | undefined): EventType[] | null {
  const wanted = (values ?? []).map((v) => v.trim()).filter((v) => v !== '')
  if (wanted.length === 0) return null
  if (!wanted.every(isEventType)) throw fieldError('events', 'The selected events is invalid.')
  if (wanted.includes('spam')) wanted.push('spam_complaint')
  return [...new Set(wanted)]
}

const EVENTS_KEY = /^events(?:\[\d*\])?$/

/**
 * Folds `events[]=a&events[]=b`, PHP's `events[0]=a` and a bare `events=a` into one `events` array, in place,
 * before validation: for routes that take the email log's `events[]` filter (EmailLogQuery).
 */
export function foldEventsQuery(query: Record<string, unknown>): void {
  const values: unknown[] = []
  for (const key of Object.keys(query)) {
    if (!EVENTS_KEY.test(key)) continue
    const v = query[key]
    values.push(...(Array.isArray(v) ? v : [v]))
    delete query[key]
  }
  if (values.length > 0) query.events = values
}

/**
 * `GET /campaigns/{id}/log` (one campaign, which the caller has checked is the account's) and
 * `GET /campaigns/log` (campaignId null: every campaign of the account): email log entries with their event
 * id, newest first, filtered and paged as the email log is; `email` (normalised by the caller) keeps one
 * recipient's.
 */
export async function campaignLog(
  ex: Executor,
  accountId: number,
  scope: { campaignId: number | null; email: string | null },
  query: Pick<CampaignLogQueryT, 'events' | 'page' | 'per_page' | 'sort_dir'>,
) {
  const types = eventFilter(query.events) ?? [...EVENT_TYPES]
  const page = toPage(query.page, query.per_page, DEFAULT_EMAIL_LOG_PAGE)
  const oldestFirst = query.sort_dir?.toLowerCase() === 'asc'
  const { rows, total } = await campaignEventsPage(ex, accountId, scope, types, oldestFirst, page)
  return {
    campaign_log: rows.map((r) => ({ id: r.id, ...toEmailLogEntry(r) })),
    current_page: page.page,
    per_page: page.perPage,
    total,
    last_page: lastPage(total, page.perPage),
  }
}
