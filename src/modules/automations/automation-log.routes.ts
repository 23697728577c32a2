import type { FastifyRequest } from 'fastify'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors } from '../../core/http/schemas.js'
import {
  AutomationLogPage,
  AutomationLogParams,
  AutomationLogQuery,
  SORT_COLUMN_KEYS,
  SORT_DIRECTION_KEYS,
} from './automation-log.schemas.js'
import { createAutomationLogService } from './automation-log.service.js'

const SORT_KEYS: readonly string[] = [...SORT_COLUMN_KEYS, ...SORT_DIRECTION_KEYS]

/** `DESC` and `Timestamp` mean what `desc` and `timestamp` do; '' (a form's "not chosen") means the default. */
async function foldSortCase(req: FastifyRequest): Promise<void> {
  const query = req.query as Record<string, unknown>
  for (const key of SORT_KEYS) {
    const v = query[key]
    if (typeof v !== 'string') continue
    const folded = v.trim().toLowerCase()
    if (folded === '') delete query[key]
    else query[key] = folded
  }
}

/** A subscriber's automation log (api.md "GET /subscribers/{email}/automation-log"). */
export function automationLogRoutes(app: ApiApp, ctx: AppContext): void {
  const log = createAutomationLogService(ctx)
  app.get(
    '/subscribers/:email/automation-log',
    {
      schema: {
        operationId: 'getSubscriberAutomationLog',
        tags: ['Subscribers'],
        summary: 'Automation steps taken for one address, newest first',
        description:
          'Query per contract §3: page, per_page (default 20, at most 100), sort_by (timestamp, id, ' +
          'pipeline_id; also as sort or order_by), sort_dir (asc, desc; also as direction, order or ' +
          'sort_order). An address that is no contact and has no log answers 404.',
        params: AutomationLogParams,
        querystring: AutomationLogQuery,
        response: { 200: AutomationLogPage, ...commonErrors },
      },
      preValidation: foldSortCase,
    },
    async (req) => log.page(req.account.id, req.params.email, req.query),
  )
}
