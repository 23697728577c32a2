import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, Deleted, IdParams } from '../../core/http/schemas.js'
import {
  CreateFeedBody,
  FeedObject,
  ProductsPage,
  ProductsQuery,
  RefreshReply,
  refreshErrors,
} from './feeds.schemas.js'
import { createFeedService } from './feeds.service.js'

const tags = ['Data feeds']

export function feedRoutes(app: ApiApp, ctx: AppContext): void {
  const feeds = createFeedService(ctx)
  app.post(
    '/feeds',
    {
      schema: {
        tags,
        operationId: 'createFeed',
        summary: 'Register a product feed (Heureka XML, Google Merchant XML or CSV) by its URL',
        body: CreateFeedBody,
        response: { 200: FeedObject, ...commonErrors },
      },
    },
    async (req) => feeds.create(req.account.id, req.body),
  )
  app.get(
    '/feeds',
    {
      schema: {
        tags,
        operationId: 'listFeeds',
        summary: "The account's feeds",
        response: { 200: Type.Array(FeedObject), ...commonErrors },
      },
    },
    async (req) => feeds.list(req.account.id),
  )
  app.get(
    '/feeds/:id',
    {
      schema: {
        tags,
        operationId: 'getFeed',
        summary: 'A feed and the state of its last refresh',
        params: IdParams,
        response: { 200: FeedObject, ...commonErrors },
      },
    },
    async (req) => feeds.get(req.account.id, req.params.id),
  )
  app.get(
    '/feeds/:id/products',
    {
      schema: {
        tags,
        operationId: 'listFeedProducts',
        summary: 'The products of the last good refresh, by product id, a page at a time',
        params: IdParams,
        querystring: ProductsQuery,
        response: { 200: ProductsPage, ...commonErrors },
      },
    },
    async (req) => feeds.products(req.account.id, req.params.id, req.query),
  )
  app.delete(
    '/feeds/:id',
    {
      schema: {
        tags,
        operationId: 'deleteFeed',
        summary: 'Delete a feed and its products',
        params: IdParams,
        response: { 200: Deleted, ...commonErrors },
      },
    },
    async (req) => feeds.remove(req.account.id, req.params.id),
  )
  for (const [path, operationId] of [
    ['/data-feeds/:id/refresh', 'refreshDataFeed'],
    ['/feeds/:id/refresh', 'refreshFeed'],
  ] as const) {
    app.get(
      path,
      {
        schema: {
          tags,
          operationId,
          summary:
            'Refresh the feed and answer its outcome when it ends within FEED_REFRESH_WAIT_SECONDS (marketer plan; once an hour; fewer than 50,000 items, else 422)',
          params: IdParams,
          response: { 200: RefreshReply, ...refreshErrors },
        },
      },
      async (req) => feeds.requestRefresh(req.account, req.params.id),
    )
  }
}
