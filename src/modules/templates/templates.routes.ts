import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, Deleted, IdParams } from '../../core/http/schemas.js'
import { CreateTemplateBody, TemplateObject, UpdateTemplateBody } from './templates.schemas.js'
import { createTemplateService } from './templates.service.js'

const tags = ['Templates']

export function templateRoutes(app: ApiApp, ctx: AppContext): void {
  const templates = createTemplateService(ctx)
  // `POST /template` is the alias one Ecomail client calls (contract §1); each path needs its own operationId.
  for (const [path, operationId] of [
    ['/templates', 'createTemplate'],
    ['/template', 'createTemplateAlias'],
  ] as const) {
    app.post(
      path,
      {
        schema: {
          operationId,
          tags,
          summary: 'Create a template',
          body: CreateTemplateBody,
          response: { 200: TemplateObject, ...commonErrors },
        },
      },
      async (req) => templates.create(req.account.id, req.body),
    )
  }
  app.get(
    '/templates',
    {
      schema: {
        operationId: 'listTemplates',
        tags,
        summary: 'All templates',
        response: { 200: Type.Array(TemplateObject), ...commonErrors },
      },
    },
    async (req) => templates.all(req.account.id),
  )
  // `GET /template/{id}` is the singular path a PHP client reads a template by, beside the one it creates with.
  for (const [path, operationId] of [
    ['/templates/:id', 'getTemplate'],
    ['/template/:id', 'getTemplateAlias'],
  ] as const) {
    app.get(
      path,
      {
        schema: {
          operationId,
          tags,
          summary: 'A template',
          params: IdParams,
          response: { 200: TemplateObject, ...commonErrors },
        },
      },
      async (req) => templates.one(req.account.id, req.params.id),
    )
  }
  app.put(
    '/templates/:id',
    {
      schema: {
        operationId: 'updateTemplate',
        tags,
        summary: 'Update a template',
        params: IdParams,
        body: UpdateTemplateBody,
        response: { 200: TemplateObject, ...commonErrors },
      },
    },
    async (req) => templates.update(req.account.id, req.params.id, req.body),
  )
  app.delete(
    '/templates/:id',
    {
      schema: {
        operationId: 'deleteTemplate',
        tags,
        summary: 'Delete a template',
        params: IdParams,
        response: { 200: Deleted, ...commonErrors },
      },
    },
    async (req) => templates.remove(req.account.id, req.params.id),
  )
}
