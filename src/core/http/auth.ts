import type { FastifyReply, FastifyRequest } from 'fastify'
import { sha256Hex } from '../ids.js'
import { unauthorized } from './errors.js'

export type Plan = 'free' | 'paid' | 'marketer'

export interface AuthAccount {
  id: number
  plan: Plan
}

declare module 'fastify' {
  interface FastifyRequest {
    account: AuthAccount
  }
}

export type KeyResolver = (keyHash: string) => Promise<AuthAccount | null>

/** The `key` header (any case; Node lower-cases header names) checked against stored SHA-256 hashes. */
export function keyAuth(resolve: KeyResolver) {
  return async function authenticate(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const key = req.headers.key
    if (typeof key !== 'string' || key.length === 0 || key.length > 512) throw unauthorized()
    const account = await resolve(sha256Hex(key))
    if (!account) throw unauthorized()
    req.account = account
  }
}
