import { Type } from '@sinclair/typebox'
import { sql } from 'drizzle-orm'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'

const Health = Type.Object({ status: Type.String(), database: Type.String() })

export function systemRoutes(app: ApiApp, ctx: AppContext): void {
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
      try {
        await ctx.db.execute(sql`SELECT 1`)
        return { status: 'ok', database: ctx.dbHandle.kind }
      } catch {
        return reply.code(503).send({ status: 'unavailable', database: ctx.dbHandle.kind })
      }
    },
  )
}
