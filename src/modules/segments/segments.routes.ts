import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { commonErrors, IdParams } from '../../core/http/schemas.js'
import { CreateSegmentBody, SegmentObject } from './segments.schemas.js'
import { createSegmentService } from './segments.service.js'

const tags = ['Segments']

export function segmentRoutes(app: ApiApp, ctx: AppContext): void {
  const segments = createSegmentService(ctx)

  app.post(
    '/lists/:id/segments',
    {
      schema: {
        operationId: 'createSegment',
        tags,
        summary: 'Create a segment of a list',
        params: IdParams,
        body: CreateSegmentBody,
        response: { 200: SegmentObject, ...commonErrors },
      },
    },
    async (req) => segments.create(req.account.id, req.params.id, req.body),
  )
  app.get(
    '/lists/:id/segments',
    {
      schema: {
        operationId: 'listSegments',
        tags,
        summary: 'Segments of a list, with how many subscribers match each now',
        params: IdParams,
        response: { 200: Type.Array(SegmentObject), ...commonErrors },
      },
    },
    async (req) => segments.all(req.account.id, req.params.id),
  )
}
