import { timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { notFound, unauthorized } from '../../core/http/errors.js'
import { IdParams, MessageError, FieldErrorsBody } from '../../core/http/schemas.js'
import { sha256Hex } from '../../core/ids.js'
import {
  AccountReply,
  ApiKeyReply,
  CreateAccountBody,
  CreatedAccountReply,
  RevokeKeyBody,
  RevokedReply,
  SetPlanBody,
} from './accounts.schemas.js'
import { createAccountService } from './accounts.service.js'

const errors = { 401: MessageError, 404: MessageError, 422: FieldErrorsBody }

/** Admin API (contract §2): present only when ADMIN_KEY is set; otherwise every path is an unknown route. */
export function adminRoutes(app: ApiApp, ctx: AppContext): void {
  const adminKey = ctx.config.adminKey
  if (!adminKey) return
  const expected = Buffer.from(sha256Hex(adminKey), 'hex')
  const service = createAccountService(ctx)

  app.addHook('onRequest', async (req: FastifyRequest) => {
    const key = req.headers.key
    const given = Buffer.from(sha256Hex(typeof key === 'string' ? key : ''), 'hex')
    if (!timingSafeEqual(given, expected)) throw unauthorized()
  })

  const tags = ['Admin']
  app.post(
    '/admin/accounts',
    {
      schema: {
        operationId: 'createAccount',
        tags,
        body: CreateAccountBody,
        response: { 200: CreatedAccountReply, ...errors },
      },
    },
    async (req) => service.createAccount(req.body.name, req.body.plan ?? 'free'),
  )
  app.put(
    '/admin/accounts/:id',
    {
      schema: {
        operationId: 'updateAccountPlan',
        tags,
        params: IdParams,
        body: SetPlanBody,
        response: { 200: AccountReply, ...errors },
      },
    },
    async (req) => service.setPlan(req.params.id, req.body.plan),
  )
  app.post(
    '/admin/accounts/:id/keys',
    {
      schema: {
        operationId: 'createApiKey',
        tags,
        params: IdParams,
        response: { 200: ApiKeyReply, ...errors },
      },
    },
    async (req) => ({ api_key: await service.createKey(req.params.id) }),
  )
  app.delete(
    '/admin/keys',
    {
      schema: {
        operationId: 'revokeApiKey',
        tags,
        body: RevokeKeyBody,
        response: { 200: RevokedReply, ...errors },
      },
    },
    async (req) => {
      if (!req.body) throw notFound()
      await service.revokeKey(req.body.api_key)
      return { deleted: true }
    },
  )
}
