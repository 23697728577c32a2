import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, IdParams } from '../../core/http/schemas.js'
import { createCampaignActions } from './campaign-actions.service.js'

const tags = ['Campaigns']
const Moved = Type.Object({
  id: Type.Integer(),
  status: Type.Integer({ description: 'campaign status code' }),
})
const PauseState = Type.Object({
  id: Type.Integer(),
  status: Type.Integer(),
  paused: Type.Boolean(),
})

/** Sending controls: send (and its aliases), schedule, unschedule, pause, resume, cancel, test copies. */
export function campaignActionRoutes(app: ApiApp, ctx: AppContext): void {
  const actions = createCampaignActions(ctx)
  // Contract §1 aliases: POST /campaigns/{id}/send and POST|GET /campaign/{id}/send; and GET on the plural path,
  // which a PHP client whose HTTP wrapper turns a bodiless POST into a GET calls (it answered 404 and the
  // campaign never went out). Every one needs the account's key, so no link or prefetch can send a campaign.
  // One schema per route: they differ only in their operationId, which must be unique.
  for (const [method, path, operationId] of [
    ['POST', '/campaigns/:id/send', 'sendCampaign'],
    ['POST', '/campaign/:id/send', 'sendCampaignAlias'],
    ['GET', '/campaign/:id/send', 'sendCampaignAliasGet'],
    ['GET', '/campaigns/:id/send', 'sendCampaignGet'],
  ] as const) {
    app.route({
      method,
      url: path,
      schema: {
        operationId,
        tags,
        summary: 'Send a campaign now',
        params: IdParams,
        response: { 200: Moved, ...commonErrors },
      },
      handler: async (req) => actions.send(req.account.id, req.params.id),
    })
  }

  app.post(
    '/campaigns/:id/schedule',
    {
      schema: {
        operationId: 'scheduleCampaign',
        tags,
        summary: 'Schedule a campaign',
        params: IdParams,
        body: Type.Object({ scheduled_at: Type.String({ description: 'YYYY-MM-DD HH:MM:SS, UTC' }) }),
        response: { 200: Moved, ...commonErrors },
      },
    },
    async (req) => actions.schedule(req.account.id, req.params.id, req.body.scheduled_at),
  )
  app.delete(
    '/campaigns/:id/schedule',
    {
      schema: {
        operationId: 'unscheduleCampaign',
        tags,
        summary: 'Unschedule a campaign (back to draft)',
        params: IdParams,
        response: { 200: Moved, ...commonErrors },
      },
    },
    async (req) => actions.unschedule(req.account.id, req.params.id),
  )
  app.post(
    '/campaigns/:id/pause',
    {
      schema: {
        operationId: 'pauseCampaign',
        tags,
        summary: 'Pause a sending campaign',
        params: IdParams,
        response: { 200: PauseState, ...commonErrors },
      },
    },
    async (req) => actions.pause(req.account.id, req.params.id),
  )
  app.post(
    '/campaigns/:id/resume',
    {
      schema: {
        operationId: 'resumeCampaign',
        tags,
        summary: 'Resume a paused (or errored) campaign',
        params: IdParams,
        response: { 200: PauseState, ...commonErrors },
      },
    },
    async (req) => actions.resume(req.account.id, req.params.id),
  )
  app.post(
    '/campaigns/:id/cancel',
    {
      schema: {
        operationId: 'cancelCampaign',
        tags,
        summary: 'Cancel a scheduled or sending campaign',
        params: IdParams,
        response: { 200: Moved, ...commonErrors },
      },
    },
    async (req) => actions.cancel(req.account.id, req.params.id),
  )
  app.post(
    '/campaigns/:id/test',
    {
      schema: {
        operationId: 'sendCampaignTest',
        tags,
        summary: 'Send test copies (counted in no statistic)',
        description:
          'Queues a copy of the campaign as it stands for each address; the sender sends them. Answers once they are queued: `sent` is the number of copies queued.',
        params: IdParams,
        body: Type.Object({ emails: Type.Array(Type.String()) }),
        response: {
          200: Type.Object({ success: Type.Boolean(), sent: Type.Integer() }),
          ...commonErrors,
        },
      },
    },
    async (req) => actions.test(req.account.id, req.params.id, req.body.emails),
  )
}
