import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, ErrorList, MessageError } from '../../core/http/schemas.js'
import { TrackerEvent, TrackerEventBody } from './tracker-events.schemas.js'
import { createTrackerEventService } from './tracker-events.service.js'

export function trackerEventRoutes(app: ApiApp, ctx: AppContext): void {
  const events = createTrackerEventService(ctx)
  app.post(
    '/tracker/events',
    {
      schema: {
        tags: ['Tracker events'],
        operationId: 'trackEvent',
        summary: 'Record an event of a subscriber (for segments and event-triggered automations)',
        description: 'The address must be in one of the account\'s lists: otherwise 404 `{"errors":[..]}`.',
        body: TrackerEventBody,
        response: { 200: TrackerEvent, ...commonErrors, 404: Type.Union([ErrorList, MessageError]) },
      },
    },
    async (req) => events.track(req.account.id, req.body),
  )
}
