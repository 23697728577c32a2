import type { FastifyReply, FastifyRequest } from 'fastify'
import { sha256Hex } from '../ids.js'
import type { AuthFailureLimiter } from './auth-failures.js'
import { HttpError, unauthorized } from './errors.js'

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

/** Contract §1's 429, with the headers the per-key limit sends too. */
function tooManyFailures(limit: number, retryAfter: number): HttpError {
  return new HttpError(
    429,
    { message: `Too many requests with a missing or unknown API key. Retry in ${retryAfter} seconds.` },
    {
      // The per-key limit's plugin has set its own figures for this key's budget by now; these replace them.
      'ratelimit-limit': String(limit),
      'ratelimit-remaining': '0',
      'ratelimit-reset': String(retryAfter),
      'retry-after': String(retryAfter),
      'ratelimit-policy': `${limit};w=60`,
      ratelimit: `limit=${limit}, remaining=0, reset=${retryAfter}`,
    },
  )
}

/**
 * The `key` header (any case; Node lower-cases header names) checked against stored SHA-256 hashes. With a
 * failure limiter, a client address that sent too many missing or unknown keys gets 429 before any lookup,
 * except for keys that resolved before (see AuthFailureLimiter.vouch).
 */
export function keyAuth(resolve: KeyResolver, failures?: AuthFailureLimiter) {
  return async function authenticate(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const key = req.headers.key
    const usable = typeof key === 'string' && key.length > 0 && key.length <= 512
    const keyHash = usable ? sha256Hex(key) : undefined
    if (failures) {
      const now = Date.now()
      const wait = failures.retryAfter(req.ip, now)
      if (wait > 0 && !(keyHash && failures.isVouched(keyHash, now)))
        throw tooManyFailures(failures.limit, wait)
    }
    const account = keyHash ? await resolve(keyHash) : null
    if (!account) {
      failures?.failed(req.ip, Date.now())
      throw unauthorized()
    }
    if (failures && keyHash) failures.vouch(keyHash, Date.now())
    req.account = account
  }
}
