import { and, eq, isNull, sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import type { AuthAccount, Plan } from '../../core/http/auth.js'
import { accounts, apiKeys } from './accounts.table.js'

export async function insertAccount(ex: Executor, name: string, plan: Plan): Promise<number> {
  const [row] = await ex.insert(accounts).values({ name, plan }).returning({ id: accounts.id })
  return row!.id
}

export async function updatePlan(ex: Executor, accountId: number, plan: Plan) {
  const [row] = await ex.update(accounts).set({ plan }).where(eq(accounts.id, accountId)).returning()
  return row
}

export async function findAccount(ex: Executor, accountId: number) {
  const [row] = await ex.select().from(accounts).where(eq(accounts.id, accountId))
  return row
}

export async function countAccounts(ex: Executor): Promise<number> {
  const [row] = await ex.select({ n: sql<number>`count(*)::int` }).from(accounts)
  return row?.n ?? 0
}

/** Inserts a key hash; false when that hash is already stored (any account). */
export async function insertKeyHash(ex: Executor, accountId: number, keyHash: string): Promise<boolean> {
  const rows = await ex
    .insert(apiKeys)
    .values({ accountId, keyHash })
    .onConflictDoNothing()
    .returning({ id: apiKeys.id })
  return rows.length > 0
}

export async function keyHashExists(ex: Executor, keyHash: string): Promise<boolean> {
  const rows = await ex.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.keyHash, keyHash))
  return rows.length > 0
}

/** Marks a key revoked; false when no live key has that hash. */
export async function revokeKeyHash(ex: Executor, keyHash: string, at: Date): Promise<boolean> {
  const rows = await ex
    .update(apiKeys)
    .set({ revokedAt: at })
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id })
  return rows.length > 0
}

export async function findAccountByKeyHash(ex: Executor, keyHash: string): Promise<AuthAccount | null> {
  const [row] = await ex
    .select({ id: accounts.id, plan: accounts.plan })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
  return row ?? null
}

/** Serialises bootstrap across processes starting together on one PostgreSQL. */
export async function lockBootstrap(ex: Executor): Promise<void> {
  await ex.execute(sql`SELECT pg_advisory_xact_lock(7200342)`)
}
