import type { AppContext } from '../../core/context.js'
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
import { emailLogPage } from './events.repo.js'
import type { EventType } from './events.table.js'

const KNOWN = new Set<string>(EVENT_TYPES)
const isEventType = (v: string): v is EventType => KNOWN.has(v)

/** The `events` filter as event types; null when none is asked for ('' is a form's "not chosen"). */
function eventFilter(values: string[] | undefined): EventType[] | null {
  const wanted = (values ?? []).map((v) => v.trim()).filter((v) => v !== '')
  if (wanted.length === 0) return null
  if (!wanted.every(isEventType)) throw fieldError('events', 'The selected events is invalid.')
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
