import type { AppContext } from '../../core/context.js'
import { lastPage, toPage } from '../../core/db/pagination.js'
import { normalizeEmail } from '../../core/http/email.js'
import { notFound } from '../../core/http/errors.js'
import {
  DEFAULT_EMAIL_LOG_PAGE,
  emailLogPage,
  eventFilter,
  toEmailLogEntry,
  type EmailLogQueryT,
} from '../events/index.js'
import { addressKnown } from './email-log.repo.js'

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
