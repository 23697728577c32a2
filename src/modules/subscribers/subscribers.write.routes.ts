import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, IdParams } from '../../core/http/schemas.js'
import { BULK_UPDATE_INVALID, createBulkUpdateService } from './bulk-update.service.js'
import { createSubscribeBulkService } from './subscribe-bulk.service.js'
import { createSubscribeService } from './subscribe.service.js'
import { SubscribeReply, SubscriberDetail, UnsubscribeReply } from './subscribers.schemas.js'
import {
  bulkUpdateErrors,
  InsertsReply,
  memberErrors,
  SubscribeBody,
  SubscribeBulkBody,
  UnsubscribeBody,
  UpdateBulkBody,
  UpdatesReply,
  UpdateSubscriberBody,
} from './subscribers.write.schemas.js'
import { isPlainObject } from './subscriber-fields.validation.js'
import { createUnsubscribeService } from './unsubscribe.service.js'
import { createUpdateSubscriberService } from './update-subscriber.service.js'

const tags = ['Subscribers']

/** subscribe, subscribe-bulk, update-subscriber, update-subscribers-bulk (+ alias), unsubscribe. */
export function subscriberWriteRoutes(app: ApiApp, ctx: AppContext): void {
  const subscribe = createSubscribeService(ctx)
  const subscribeBulk = createSubscribeBulkService(ctx)
  const updateOne = createUpdateSubscriberService(ctx)
  const updateBulk = createBulkUpdateService(ctx)
  const unsubscribe = createUnsubscribeService(ctx)

  app.post(
    '/lists/:id/subscribe',
    {
      schema: {
        operationId: 'subscribeToList',
        tags,
        summary: 'Subscribe one address to a list (double opt-in lists send a confirmation mail)',
        params: IdParams,
        body: SubscribeBody,
        response: { 200: SubscribeReply, ...commonErrors },
      },
    },
    async (req) => subscribe.subscribe(req.account.id, req.params.id, req.body),
  )

  app.post(
    '/lists/:id/subscribe-bulk',
    {
      schema: {
        operationId: 'subscribeToListBulk',
        tags,
        summary: 'Subscribe up to 3000 addresses at once (no confirmation mail)',
        params: IdParams,
        body: SubscribeBulkBody,
        response: { 200: InsertsReply, ...commonErrors },
      },
    },
    async (req) => subscribeBulk.subscribeBulk(req.account.id, req.params.id, req.body),
  )

  app.put(
    '/lists/:id/update-subscriber',
    {
      schema: {
        operationId: 'updateSubscriber',
        tags,
        summary: 'Update one member of a list',
        params: IdParams,
        body: UpdateSubscriberBody,
        response: { 200: SubscriberDetail, ...memberErrors },
      },
    },
    async (req) => updateOne.updateSubscriber(req.account.id, req.params.id, req.body),
  )

  // Both spellings are in use by real clients (contract §1, path aliases).
  for (const [path, operationId] of [
    ['/lists/:id/update-subscribers-bulk', 'updateSubscribersBulk'],
    ['/lists/:id/update-subscriber-bulk', 'updateSubscribersBulkAlias'],
  ] as const) {
    app.put(
      path,
      {
        schema: {
          operationId,
          tags,
          summary: 'Update up to 3000 existing members of a list (validation failures answer 400)',
          params: IdParams,
          body: UpdateBulkBody,
          response: { 200: UpdatesReply, ...bulkUpdateErrors },
        },
        // Invalid input answers 400 here (api.md), also where the app refuses it before the service.
        config: { invalidStatus: BULK_UPDATE_INVALID },
        // Whatever arrives (no body, an array, a scalar) is the service's to judge, so that it answers 400.
        preValidation: async (req) => {
          if (!isPlainObject(req.body)) req.body = {}
        },
      },
      async (req) => updateBulk.updateBulk(req.account.id, req.params.id, req.body),
    )
  }

  app.delete(
    '/lists/:id/unsubscribe',
    {
      schema: {
        operationId: 'unsubscribeFromList',
        tags,
        summary: 'Unsubscribe one address from a list',
        params: IdParams,
        body: UnsubscribeBody,
        response: { 200: UnsubscribeReply, ...memberErrors },
      },
    },
    async (req) => unsubscribe.unsubscribe(req.account.id, req.params.id, req.body.email),
  )
}
