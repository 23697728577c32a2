import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors } from '../../core/http/schemas.js'
import {
  PipelineDetailEmailsBody,
  PipelineDetailPage,
  PipelineDetailQuery,
  PipelineIdParams,
  PipelineStatsQuery,
  PipelineStatsResponse,
} from './automation-stats.schemas.js'
import { createAutomationStatsService } from './automation-stats.service.js'

const tags = ['Automations']

/** Statistics of an automation and its per-recipient detail (contract §5, §6). */
export function automationStatsRoutes(app: ApiApp, ctx: AppContext): void {
  const stats = createAutomationStatsService(ctx)

  app.get(
    '/pipelines/:id/stats',
    {
      schema: {
        operationId: 'getPipelineStats',
        tags,
        summary: 'Statistics of an automation',
        description:
          'Counters of all its mail nodes per contract §5, runs triggered and ended, conversions. With ' +
          'from_date and/or to_date (YYYY-MM-DD, UTC, inclusive) also open_in_range, click_in_range and ' +
          'inject_in_range: mails opened, clicked and injected within the period.',
        params: PipelineIdParams,
        querystring: PipelineStatsQuery,
        response: { 200: PipelineStatsResponse, ...commonErrors },
      },
    },
    async (req) => stats.stats(req.account.id, req.params.id, req.query),
  )

  app.get(
    '/pipelines/:id/stats-detail',
    {
      schema: {
        operationId: 'getPipelineStatsDetail',
        tags,
        summary: 'Event counts per recipient of an automation',
        params: PipelineIdParams,
        querystring: PipelineDetailQuery,
        response: { 200: PipelineDetailPage, ...commonErrors },
      },
    },
    async (req) => stats.detail(req.account.id, req.params.id, req.query),
  )
  // PHP clients ask for the automation's figures of a list of addresses by POSTing it here.
  app.post(
    '/pipelines/:id/stats-detail',
    {
      schema: {
        operationId: 'getPipelineStatsDetailOfEmails',
        tags,
        summary: 'Event counts of the given recipients of an automation',
        description:
          'Pages as the GET does; `next_page_url` names the next page by its query only, so it is POSTed again ' +
          'with the same `emails` (a link cannot carry the list).',
        params: PipelineIdParams,
        querystring: PipelineDetailQuery,
        body: PipelineDetailEmailsBody,
        response: { 200: PipelineDetailPage, ...commonErrors },
      },
    },
    async (req) => stats.detail(req.account.id, req.params.id, req.query, req.body.emails),
  )
}
