import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, Deleted, IdParams } from '../../core/http/schemas.js'
import {
  CampaignBody,
  CampaignDetail,
  CampaignListItem,
  CampaignListQuery,
  CampaignSaved,
} from './campaigns.schemas.js'
import { spreadJsonFilters } from './campaigns.filters-json.js'
import { createCampaignService } from './campaigns.service.js'

const tags = ['Campaigns']
const editRule = 'Only while the campaign is a draft (0) or scheduled (7); otherwise 422 on `status`.'

/** CRUD: GET/POST /campaigns, GET/PUT/DELETE /campaigns/{id} */
export function campaignRoutes(app: ApiApp, ctx: AppContext): void {
  const campaigns = createCampaignService(ctx)
  app.get(
    '/campaigns',
    {
      schema: {
        operationId: 'listCampaigns',
        tags,
        summary: 'Campaigns, filtered, sorted and paged',
        description:
          '`filters[date_from]`/`filters[date_to]` select by the day sending started (UTC, both inclusive); ' +
          'a campaign not yet sent matches no date range. `filters[updated_at]` selects by the day of the last change.',
        querystring: CampaignListQuery,
        response: { 200: Type.Array(CampaignListItem), ...commonErrors },
      },
      preValidation: spreadJsonFilters,
    },
    async (req) => campaigns.list(req.account.id, req.query),
  )
  app.post(
    '/campaigns',
    {
      schema: {
        operationId: 'createCampaign',
        tags,
        summary: 'Create a campaign (a draft, status 0)',
        body: CampaignBody,
        response: { 200: CampaignSaved, ...commonErrors },
      },
    },
    async (req) => campaigns.create(req.account.id, req.body),
  )
  app.get(
    '/campaigns/:id',
    {
      schema: {
        operationId: 'getCampaign',
        tags,
        summary: 'A campaign with its targets and statistics',
        params: IdParams,
        response: { 200: CampaignDetail, ...commonErrors },
      },
    },
    async (req) => campaigns.detail(req.account.id, req.params.id),
  )
  app.put(
    '/campaigns/:id',
    {
      schema: {
        operationId: 'updateCampaign',
        tags,
        summary: 'Replace the content and targets of a campaign',
        description: `${editRule} The status itself stays as it is.`,
        params: IdParams,
        body: CampaignBody,
        response: { 200: CampaignSaved, ...commonErrors },
      },
    },
    async (req) => campaigns.update(req.account.id, req.params.id, req.body),
  )
  app.delete(
    '/campaigns/:id',
    {
      schema: {
        operationId: 'deleteCampaign',
        tags,
        summary: 'Delete a campaign',
        description: editRule,
        params: IdParams,
        response: { 200: Deleted, ...commonErrors },
      },
    },
    async (req) => campaigns.remove(req.account.id, req.params.id),
  )
}
