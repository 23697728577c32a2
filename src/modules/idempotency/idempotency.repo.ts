import { and, eq, lt, sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { idempotencyKeys } from './idempotency.table.js'

export type IdempotencyRecord = typeof idempotencyKeys.$inferSelect

/** Claims a key for a first request; returns the existing record when the key was used already. */
export async function claim(
  ex: Executor,
  accountId: number,
  key: string,
  requestHash: string,
  now: Date,
): Promise<IdempotencyRecord | null> {
  // Side effect: forgets expired records of this key first, so a key can be reused after 24 h.
  await ex
    .delete(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.accountId, accountId),
        eq(idempotencyKeys.key, key),
        lt(idempotencyKeys.createdAt, new Date(now.getTime() - 24 * 3600_000)),
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
