import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, Deleted, IdParams } from '../../core/http/schemas.js'
import {
  ActionParams,
  CreatePipelineBody,
  NodeList,
  NodeOne,
  PipelineObject,
  PipelineSummary,
  UpdatePipelineBody,
} from './pipelines.schemas.js'
import { createPipelineService } from './pipelines.service.js'

const tags = ['Automations']

/** Pipelines as a resource (api.md Automations, contract §6); the trigger and stats routes live elsewhere. */
export function pipelineRoutes(app: ApiApp, ctx: AppContext): void {
  const pipelines = createPipelineService(ctx)
  app.post(
    '/pipelines',
    {
      schema: {
        operationId: 'createPipeline',
        tags,
        summary: 'Create an automation',
        body: CreatePipelineBody,
        response: { 200: PipelineObject, ...commonErrors },
      },
    },
    async (req) => pipelines.create(req.account.id, req.body),
  )
  app.get(
    '/pipelines',
    {
      schema: {
        operationId: 'listPipelines',
        tags,
        summary: 'All automations',
        response: { 200: Type.Array(PipelineSummary), ...commonErrors },
      },
    },
    async (req) => pipelines.all(req.account.id),
  )
  app.get(
    '/pipelines/:id',
    {
      schema: {
        operationId: 'getPipeline',
        tags,
        summary: 'An automation with its graph',
        params: IdParams,
        response: { 200: PipelineObject, ...commonErrors },
      },
    },
    async (req) => pipelines.one(req.account.id, req.params.id),
  )
  app.put(
    '/pipelines/:id',
    {
      schema: {
        operationId: 'updatePipeline',
        tags,
        summary: 'Update an automation (fields left out keep their values)',
        params: IdParams,
        body: UpdatePipelineBody,
        response: { 200: PipelineObject, ...commonErrors },
      },
    },
    async (req) => pipelines.update(req.account.id, req.params.id, req.body),
  )
  app.delete(
    '/pipelines/:id',
    {
      schema: {
        operationId: 'deletePipeline',
        tags,
        summary: 'Delete an automation',
        params: IdParams,
        response: { 200: Deleted, ...commonErrors },
      },
    },
    async (req) => pipelines.remove(req.account.id, req.params.id),
  )
  app.get(
    '/pipelines/:id/actions',
    {
      schema: {
        operationId: 'listPipelineActions',
        tags,
        summary: 'The action nodes of an automation',
        params: IdParams,
        response: { 200: NodeList, ...commonErrors },
      },
    },
    async (req) => pipelines.actions(req.account.id, req.params.id),
  )
  app.get(
    '/pipelines/:id/actions/:actionId',
    {
      schema: {
        operationId: 'getPipelineAction',
        tags,
        summary: 'One action node of an automation',
        params: ActionParams,
        response: { 200: NodeOne, ...commonErrors },
      },
    },
    async (req) => pipelines.action(req.account.id, req.params.id, req.params.actionId),
  )
}
