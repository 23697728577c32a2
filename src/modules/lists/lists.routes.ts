import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, Deleted, IdParams } from '../../core/http/schemas.js'
import { CreateListBody, ListDetail, ListObject, UpdateListBody } from './lists.schemas.js'
import { createListService, type SegmentsOf } from './lists.service.js'

const tags = ['Lists']

export function listRoutes(app: ApiApp, ctx: AppContext, segmentsOf: SegmentsOf): void {
  const lists = createListService(ctx, segmentsOf)

  app.post(
    '/lists',
    {
      schema: {
        operationId: 'createList',
        tags,
        summary: 'Create a list',
        body: CreateListBody,
        response: { 200: ListObject, ...commonErrors },
      },
    },
    async (req) => lists.create(req.account.id, req.body),
  )
  app.get(
    '/lists',
    {
      schema: {
        operationId: 'listLists',
        tags,
        summary: 'All lists',
        response: { 200: Type.Array(ListObject), ...commonErrors },
      },
    },
    async (req) => lists.all(req.account.id),
  )
  app.get(
    '/lists/:id',
    {
      schema: {
        operationId: 'getList',
        tags,
        summary: 'A list with its subscriber counts',
        params: IdParams,
        response: { 200: ListDetail, ...commonErrors },
      },
    },
    async (req) => lists.detail(req.account.id, req.params.id),
  )
  app.put(
    '/lists/:id',
    {
      schema: {
        operationId: 'updateList',
        tags,
        summary: 'Update a list',
        params: IdParams,
        body: UpdateListBody,
        response: { 200: ListObject, ...commonErrors },
      },
    },
    async (req) => lists.update(req.account.id, req.params.id, req.body),
  )
  app.delete(
    '/lists/:id',
    {
      schema: {
        operationId: 'deleteList',
        tags,
        summary: 'Delete a list',
        params: IdParams,
        response: { 200: Deleted, ...commonErrors },
      },
    },
    async (req) => lists.remove(req.account.id, req.params.id),
  )
}
