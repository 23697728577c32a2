import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, Deleted, ErrorList, FieldErrorsBody, IdParams } from '../../core/http/schemas.js'
import {
  CreateBody,
  Recommendations,
  RecommendationsQuery,
  Recommender,
  UpdateBody,
} from './recommenders.schemas.js'
import { createRecommenderService } from './recommenders.service.js'

const tags = ['Recommenders']

export function recommenderRoutes(app: ApiApp, ctx: AppContext): void {
  const service = createRecommenderService(ctx)
  app.post(
    '/recommenders',
    {
      schema: {
        tags,
        operationId: 'createRecommender',
        summary: 'Create a recommender for a shop and product feed; it trains in the background',
        description:
          'Returns an array holding the recommender (status `created`). A second one for the same shop and feed ' +
          "answers 422 `{errors:[..]}`; a feed that is not the account's, 422 `{errors:{feed_id:[..]}}`.",
        body: CreateBody,
        response: {
          200: Type.Array(Recommender),
          ...commonErrors,
          422: Type.Union([FieldErrorsBody, ErrorList]),
        },
      },
    },
    async (req) => service.create(req.account.id, req.body),
  )
  app.get(
    '/recommenders',
    {
      schema: {
        tags,
        operationId: 'listRecommenders',
        summary: "The account's recommenders",
        response: { 200: Type.Array(Recommender), ...commonErrors },
      },
    },
    async (req) => service.list(req.account.id),
  )
  app.get(
    '/recommenders/:id',
    {
      schema: {
        tags,
        operationId: 'getRecommender',
        summary: 'A recommender',
        params: IdParams,
        response: { 200: Recommender, ...commonErrors },
      },
    },
    async (req) => service.get(req.account.id, req.params.id),
  )
  app.put(
    '/recommenders/:id',
    {
      schema: {
        tags,
        operationId: 'updateRecommender',
        summary: "Change a recommender's settings",
        description:
          'Filters apply at once; a change of `included_months` retrains it (status `created`, then `training`).',
        params: IdParams,
        body: UpdateBody,
        response: { 200: Recommender, ...commonErrors },
      },
    },
    async (req) => service.update(req.account.id, req.params.id, req.body),
  )
  app.delete(
    '/recommenders/:id',
    {
      schema: {
        tags,
        operationId: 'deleteRecommender',
        summary: 'Delete a recommender and its model',
        params: IdParams,
        response: { 200: Deleted, ...commonErrors },
      },
    },
    async (req) => service.remove(req.account.id, req.params.id),
  )
  app.get(
    '/recommenders/:id/recommendations',
    {
      schema: {
        tags,
        operationId: 'getRecommendations',
        summary: 'Products to offer a person: bought with what they bought, else bestsellers',
        params: IdParams,
        querystring: RecommendationsQuery,
        response: { 200: Recommendations, ...commonErrors },
      },
    },
    async (req) => service.recommendations(req.account.id, req.params.id, req.query.email, req.query.limit),
  )
}
