import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, IdParams } from '../../core/http/schemas.js'
import { AccountCampaignLogQuery, CampaignLogQuery, foldEventsQuery } from '../events/index.js'
import {
  CampaignLogPage,
  CampaignStatsQuery,
  CampaignStatsResponse,
  StatsDetailPage,
  StatsDetailQuery,
} from './campaign-stats.schemas.js'
import { createCampaignStatsService } from './campaign-stats.service.js'

const tags = ['Campaigns']

/** `events[]=a`, `events[0]=a` and `events=a` all arrive as one `events` array before validation. */
const foldEvents = async (req: { query: unknown }) => foldEventsQuery(req.query as Record<string, unknown>)

/** Statistics of a campaign, per-recipient detail, and the campaign logs. */
export function campaignStatsRoutes(app: ApiApp, ctx: AppContext): void {
  const stats = createCampaignStatsService(ctx)

  app.get(
    '/campaigns/:id/stats',
    {
      schema: {
        operationId: 'getCampaignStats',
        tags,
        summary: 'Statistics of a campaign',
        description:
          'Counters per contract §5. With from_date and/or to_date (YYYY-MM-DD, UTC, inclusive) also ' +
          'opened_in_range and clicked_in_range: recipients with an open / a click within the period.',
        params: IdParams,
        querystring: CampaignStatsQuery,
        response: { 200: CampaignStatsResponse, ...commonErrors },
      },
    },
    async (req) => stats.stats(req.account.id, req.params.id, req.query),
  )

  app.get(
    '/campaigns/:id/stats-detail',
    {
      schema: {
        operationId: 'getCampaignStatsDetail',
        tags,
        summary: 'Event counts per recipient of a campaign',
        params: IdParams,
        querystring: StatsDetailQuery,
        response: { 200: StatsDetailPage, ...commonErrors },
      },
    },
    async (req) => stats.detail(req.account.id, req.params.id, req.query),
  )

  app.get(
    '/campaigns/:id/log',
    {
      schema: {
        operationId: 'getCampaignLog',
        tags,
        summary: 'Mail events of a campaign, newest first (sort_dir=asc: oldest first)',
        params: IdParams,
        querystring: CampaignLogQuery,
        response: { 200: CampaignLogPage, ...commonErrors },
      },
      preValidation: foldEvents,
    },
    async (req) => stats.log(req.account.id, req.params.id, req.query),
  )

  app.get(
    '/campaigns/log',
    {
      schema: {
        operationId: 'listCampaignsLog',
        tags,
        summary: 'Mail events of every campaign of the account (or of one), newest first unless sort_dir=asc',
        querystring: AccountCampaignLogQuery,
        response: { 200: CampaignLogPage, ...commonErrors },
      },
      preValidation: foldEvents,
    },
    async (req) => stats.log(req.account.id, null, req.query),
  )
}
