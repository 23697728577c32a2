import type { FastifyReply } from 'fastify'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, Deleted, IdParams } from '../../core/http/schemas.js'
import { createSubscriberDeleteService, type ErasureStep } from './subscriber-delete.service.js'
import {
  EmailParams,
  GlobalSubscriberReply,
  ListEmailParams,
  ListPage,
  ListPageQuery,
  listMemberErrors,
  ListPhoneParams,
  SubscriberDetailReply,
} from './subscribers.read.schemas.js'
import { createSubscriberReadService } from './subscribers.read.service.js'

const tags = ['Subscribers']

/** JSON the service already wrote goes out as it is: the route's 200 schema documents it, nothing re-serialises it. */
function sendJsonText(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json').send(json)
}

/** List pages, one subscriber by email or phone, the global subscriber, GDPR delete. */
export function subscriberReadRoutes(
  app: ApiApp,
  ctx: AppContext,
  erasureSteps: readonly ErasureStep[] = [],
): void {
  const read = createSubscriberReadService(ctx)
  const erase = createSubscriberDeleteService(ctx, erasureSteps)

  app.get(
    '/lists/:id/subscribers',
    {
      schema: {
        operationId: 'listListSubscribers',
        tags: ['Lists'],
        summary: 'A page of the subscribers of a list with one status',
        params: IdParams,
        querystring: ListPageQuery,
        response: { 200: ListPage, ...commonErrors },
      },
    },
    async (req, reply) => sendJsonText(reply, await read.listPage(req.account.id, req.params.id, req.query)),
  )
  app.get(
    '/lists/:id/subscriber/:email',
    {
      schema: {
        operationId: 'getListSubscriber',
        tags: ['Lists'],
        summary: 'A subscriber of a list, by email',
        params: ListEmailParams,
        response: { 200: SubscriberDetailReply, ...listMemberErrors },
      },
    },
    async (req) => read.byEmail(req.account.id, req.params.id, req.params.email),
  )
  app.get(
    '/lists/:id/subscriber-by-phone/:phone',
    {
      schema: {
        operationId: 'getListSubscriberByPhone',
        tags: ['Lists'],
        summary: 'A subscriber of a list, by phone (spaces ignored)',
        params: ListPhoneParams,
        response: { 200: SubscriberDetailReply, ...listMemberErrors },
      },
    },
    async (req) => read.byPhone(req.account.id, req.params.id, req.params.phone),
  )
  app.get(
    '/subscribers/:email',
    {
      schema: {
        operationId: 'getSubscriber',
        tags,
        summary: 'A subscriber with every list they are in',
        params: EmailParams,
        response: { 200: GlobalSubscriberReply, ...commonErrors },
      },
    },
    async (req) => read.global(req.account.id, req.params.email),
  )
  app.delete(
    '/subscribers/:email/delete',
    {
      schema: {
        operationId: 'deleteSubscriber',
        tags,
        summary: 'Erase a subscriber from every list (GDPR)',
        params: EmailParams,
        response: { 200: Deleted, ...commonErrors },
      },
    },
    async (req) => erase.erase(req.account.id, req.params.email),
  )
}
