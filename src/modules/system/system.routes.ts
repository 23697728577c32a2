import { Type } from '@sinclair/typebox'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { createHealthService } from './system.service.js'

const Health = Type.Object({ status: Type.String(), database: Type.String() })

export function systemRoutes(app: ApiApp, ctx: AppContext): void {
  const health = createHealthService(ctx)
  app.get(
    '/health',
    {
      schema: {
        operationId: 'getHealth',
        tags: ['System'],
        security: [],
        response: { 200: Health, 503: Health },
      },
    },
    async (_req, reply) => {
      const result = await health.check()
      return reply.code(result.status === 'ok' ? 200 : 503).send(result)
    },
  )
}
