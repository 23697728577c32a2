import { and, eq, isNull, lt, or, sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { idempotencyKeys } from './idempotency.table.js'

export type IdempotencyRecord = typeof idempotencyKeys.$inferSelect

const KEEP_MS = 24 * 3600_000
/**
 * A claim still without a response after this long belongs to a process that died mid-request (no request
 * runs this long: bodies are capped and every query is bounded), so a retry may take the key over instead of
 * hearing 409 for a day.
 */
export const ABANDONED_MS = 10 * 60_000

/** Claims a key for a first request; returns the existing record when the key was used already. */
export async function claim(
  ex: Executor,
  accountId: number,
  key: string,
  requestHash: string,
  now: Date,
): Promise<IdempotencyRecord | null> {
  // Side effect: forgets expired and abandoned records of this key first, so a key can be reused after 24 h
  // and a crashed first attempt can be retried.
  const before = (ms: number) => lt(idempotencyKeys.createdAt, new Date(now.getTime() - ms))
  await ex
    .delete(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.accountId, accountId),
        eq(idempotencyKeys.key, key),
        or(before(KEEP_MS), and(isNull(idempotencyKeys.statusCode), before(ABANDONED_MS))),
      ),
    )
  const inserted = await ex
    .insert(idempotencyKeys)
    .values({ accountId, key, requestHash, createdAt: now })
    .onConflictDoNothing()
    .returning()
  if (inserted.length > 0) return null
  const [existing] = await ex
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key)))
  return existing ?? null
}

export async function complete(ex: Executor, accountId: number, key: string, status: number, body: string) {
  await ex
    .update(idempotencyKeys)
    .set({ statusCode: status, responseBody: body })
    .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key)))
}

/** A first request that failed with a server error leaves no record, so the client may retry. */
export async function release(ex: Executor, accountId: number, key: string) {
  await ex
    .delete(idempotencyKeys)
    .where(
      and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key), sql`status_code IS NULL`),
    )
}
