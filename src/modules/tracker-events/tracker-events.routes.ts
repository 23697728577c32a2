import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, ErrorList, MessageError } from '../../core/http/schemas.js'
import {
  SubscriberEventsPage,
  SubscriberEventsQuery,
  TrackerEvent,
  TrackerEventBody,
} from './tracker-events.schemas.js'
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
  app.get(
    '/subscribers/:email/events',
    {
      schema: {
        tags: ['Tracker events'],
        operationId: 'getSubscriberEvents',
        summary: "A subscriber's tracker events, newest first",
        description: 'An address the account has no subscriber of: 404.',
        params: Type.Object({ email: Type.String({ maxLength: 1000 }) }),
        querystring: SubscriberEventsQuery,
        response: { 200: SubscriberEventsPage, ...commonErrors },
      },
    },
    async (req) => events.ofSubscriber(req.account.id, req.params.email, req.query),
  )
}
