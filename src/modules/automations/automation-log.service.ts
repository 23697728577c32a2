import type { AppContext } from '../../core/context.js'
import { lastPage, toPage } from '../../core/db/pagination.js'
import { normalizeEmail } from '../../core/http/email.js'
import { notFound } from '../../core/http/errors.js'
import { automationLogPage, isContact, type AutomationLogRow } from './automation-log.repo.js'
import {
  DEFAULT_AUTOMATION_LOG_PAGE,
  SORT_COLUMN_KEYS,
  SORT_DIRECTION_KEYS,
  type AutomationLogQueryT,
} from './automation-log.schemas.js'

const entry = (r: AutomationLogRow) => ({
  id: Number(r.id),
  user_id: r.account_id,
  pipeline_id: r.pipeline_id,
  action_id: r.action_id,
  trigger_id: String(r.run_id),
  email: r.email,
  props: r.props ?? {},
  next: r.next ?? null,
  timestamp: r.ts,
})

/** The first of `keys` the query holds (the contract's name wins over an alternative). */
function first<K extends keyof AutomationLogQueryT>(query: AutomationLogQueryT, keys: readonly K[]) {
  for (const k of keys) if (query[k] !== undefined) return query[k]
  return undefined
}

export function createAutomationLogService(ctx: Pick<AppContext, 'db'>) {
  return {
    /**
     * `GET /subscribers/{email}/automation-log`: newest first unless asked otherwise. An address that is no
     * contact and has no log answers 404, as the email log does; a contact without runs gets an empty page.
     */
    async page(accountId: number, rawEmail: string, query: AutomationLogQueryT) {
      const email = normalizeEmail(rawEmail)
      const page = toPage(query.page, query.per_page, DEFAULT_AUTOMATION_LOG_PAGE)
      const sort = first(query, SORT_COLUMN_KEYS) ?? 'timestamp'
      const dir = first(query, SORT_DIRECTION_KEYS) ?? 'desc'
      const { rows, total } = await automationLogPage(
        ctx.db,
        accountId,
        email,
        sort,
        dir,
        page.perPage,
        page.offset,
      )
      if (total === 0 && !(await isContact(ctx.db, accountId, email))) throw notFound('Subscriber not found')
      return {
        automation_log: rows.map(entry),
        current_page: page.page,
        per_page: page.perPage,
        total,
        last_page: lastPage(total, page.perPage),
      }
    },
  }
}
