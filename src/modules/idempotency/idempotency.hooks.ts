import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AppContext } from '../../core/context.js'
import type { ApiApp } from '../../core/http/app-types.js'
import { HttpError, fieldError } from '../../core/http/errors.js'
import { sha256Hex } from '../../core/ids.js'
import * as repo from './idempotency.repo.js'

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyKey?: string
  }
}

/**
 * `Idempotency-Key` on POST (contract §1): the first response is stored and replayed for 24 h with
 * `Idempotent-Replayed: true`; the same key with another body is a 422; a key whose first request is still
 * running answers 409.
 */
export function registerIdempotency(app: ApiApp, ctx: AppContext): void {
  app.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    const key = req.headers['idempotency-key']
    if (req.method !== 'POST' || typeof key !== 'string' || key === '') return
    if (key.length > 255)
      throw fieldError('Idempotency-Key', 'The Idempotency-Key may not be greater than 255 characters.')
    const hash = sha256Hex(`${req.routeOptions.url ?? ''}\n${req.url}\n${JSON.stringify(req.body ?? null)}`)
    const existing = await repo.claim(ctx.db, req.account.id, key, hash, ctx.clock.now())
    if (!existing) {
      req.idempotencyKey = key
      return
    }
    if (existing.requestHash !== hash) {
      throw fieldError('Idempotency-Key', 'This Idempotency-Key was already used with a different request.')
    }
    if (existing.statusCode === null || existing.responseBody === null) {
      throw new HttpError(409, { message: 'A request with this Idempotency-Key is still in progress.' })
    }
    reply.header('Idempotent-Replayed', 'true').header('content-type', 'application/json')
    return reply.code(existing.statusCode).send(existing.responseBody)
  })

  app.addHook('onSend', async (req, reply, payload) => {
    const key = req.idempotencyKey
    if (!key) return payload
    if (reply.statusCode >= 500) await repo.release(ctx.db, req.account.id, key)
    else
      await repo.complete(
        ctx.db,
        req.account.id,
        key,
        reply.statusCode,
        typeof payload === 'string' ? payload : '',
      )
    return payload
  })
}
