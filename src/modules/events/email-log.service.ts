import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { lastPage, toPage } from '../../core/db/pagination.js'
import { normalizeEmail } from '../../core/http/email.js'
import { fieldError, notFound } from '../../core/http/errors.js'
import { addressKnown } from './email-log.repo.js'
import {
  DEFAULT_EMAIL_LOG_PAGE,
  EVENT_TYPES,
  toEmailLogEntry,
  type EmailLogQueryT,
} from './email-log.schemas.js'
import { campaignEventsPage, emailLogPage } from './events.repo.js'
import type { EventType } from './events.table.js'

const KNOWN = new Set<string>(EVENT_TYPES)
const isEventType = (v: string): v is EventType => KNOWN.has(v)

/**
 * The `events` filter as event types; null when none is asked for ('' is a form's "not chosen"). Complaints
 * are recorded as `spam_complaint`, so `spam` asks for those too (as stats-detail's `spam` counts both).
 */
function eventFilter(values: string[] | undefined): EventType[] | null {
  const wanted = (values ?? []).map((v) => v.trim()).filter((v) => v !== '')
  if (wanted.length === 0) return null
  if (!wanted.every(isEventType)) throw fieldError('events', 'The selected events is invalid.')
  if (wanted.includes('spam')) wanted.push('spam_complaint')
  return [...new Set(wanted)]
}

export function createEmailLogService(ctx: Pick<AppContext, 'db'>) {
  return {
    /**
     * `GET /subscribers/{email}/email-log`, newest first. An address the account has neither as a contact nor
     * in any event answers 404, as `GET /subscribers/{email}` does; a known address without (matching) mail
     * gets an empty page.
     */
    async page(accountId: number, rawEmail: string, query: EmailLogQueryT) {
      const email = normalizeEmail(rawEmail)
      const types = eventFilter(query.events)
      const page = toPage(query.page, query.per_page, DEFAULT_EMAIL_LOG_PAGE)
      const { rows, total } = await emailLogPage(ctx.db, accountId, email, types, page.perPage, page.offset)
      if (total === 0 && !(await addressKnown(ctx.db, accountId, email)))
        throw notFound('Subscriber not found')
      return {
        current_page: page.page,
        data: rows.map(toEmailLogEntry),
        per_page: page.perPage,
        total,
        last_page: lastPage(total, page.perPage),
      }
    },
  }
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
 * id, newest first, filtered and paged as the email log is.
 */
export async function campaignLog(
  ex: Executor,
  accountId: number,
  campaignId: number | null,
  query: EmailLogQueryT,
) {
  const types = eventFilter(query.events) ?? [...EVENT_TYPES]
  const page = toPage(query.page, query.per_page, DEFAULT_EMAIL_LOG_PAGE)
  const { rows, total } = await campaignEventsPage(
    ex,
    accountId,
    campaignId,
    types,
    page.perPage,
    page.offset,
  )
  return {
    campaign_log: rows.map((r) => ({ id: r.id, ...toEmailLogEntry(r) })),
    current_page: page.page,
    per_page: page.perPage,
    total,
    last_page: lastPage(total, page.perPage),
  }
}
