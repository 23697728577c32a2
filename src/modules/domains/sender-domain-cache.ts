import type { AppContext } from '../../core/context.js'
import { resolveSenderDomain, type SenderDomain } from './find-domain.js'
import type { DomainType } from './domains.schemas.js'

/**
 * How long a process trusts a sender-domain resolution that allowed the mail: a shop sends every transactional
 * call from the same address, and the lookup was a third of the intake's statements. A domain removed,
 * re-verified or blocked through this process is forgotten at once (forgetSenderDomains); through another
 * process (another API node, the CLI) it is seen here within TTL_MS. Refusals are never kept, so a domain
 * verified a moment ago sends at once.
 */
export const TTL_MS = 1000
const MAX_ENTRIES = 1000

type Ctx = Pick<AppContext, 'db' | 'config' | 'log'>

/** Per database (tests run several apps in one process), by account, types and domain part. */
const caches = new WeakMap<object, Map<string, { until: number; domain: SenderDomain }>>()
const inFlight = new WeakMap<object, Map<string, Promise<SenderDomain>>>()

/** resolveSenderDomain through the per-process cache; the domain part of `email` decides, as it does there. */
export async function resolveSenderDomainCached(
  ctx: Ctx,
  accountId: number,
  email: string,
  types: readonly DomainType[],
): Promise<SenderDomain> {
  let cache = caches.get(ctx.db)
  if (!cache) caches.set(ctx.db, (cache = new Map()))
  let resolving = inFlight.get(ctx.db)
  if (!resolving) inFlight.set(ctx.db, (resolving = new Map()))
  const key = `${accountId}|${types.join(',')}|${email.slice(email.lastIndexOf('@') + 1).toLowerCase()}`
  // Wall time, not ctx.clock: this is a cache, not a rule of the domain.
  const now = performance.now()
  const hit = cache.get(key)
  if (hit && hit.until > now) return hit.domain
  // Every connection of a client misses at the same moment when the entry expires: they share one lookup.
  let pending = resolving.get(key)
  if (!pending) {
    pending = resolveSenderDomain(ctx, ctx.db, accountId, email, types).finally(() => resolving.delete(key))
    resolving.set(key, pending)
  }
  const domain = await pending
  if (!domain.allowed || domain.domain?.blocked) {
    cache.delete(key)
    return domain
  }
  if (cache.size >= MAX_ENTRIES) cache.clear()
  cache.set(key, { until: now + TTL_MS, domain })
  return domain
}

/** Called after any change to a domain row through this process. */
export function forgetSenderDomains(db: object): void {
  caches.get(db)?.clear()
}
