import type { AppContext } from '../../core/context.js'
import type { Plan } from '../../core/http/auth.js'
import { notFound } from '../../core/http/errors.js'
import { newApiKey, sha256Hex } from '../../core/ids.js'
import * as repo from './accounts.repo.js'
import { keyCacheFor } from './key-cache.js'
import { retriedTransaction } from '../../core/db/retry.js'

export const PLANS: readonly Plan[] = ['free', 'paid', 'marketer']

export interface CreatedAccount {
  account_id: number
  api_key: string
}

export function createAccountService(ctx: Pick<AppContext, 'db' | 'clock'>) {
  const { db } = ctx
  const cache = keyCacheFor(db)
  const resolving = new Map<string, ReturnType<typeof repo.findAccountByKeyHash>>()
  return {
    async createAccount(name: string, plan: Plan): Promise<CreatedAccount> {
      const apiKey = newApiKey()
      const accountId = await retriedTransaction(db, async (tx) => {
        const id = await repo.insertAccount(tx, name, plan)
        await repo.insertKeyHash(tx, id, sha256Hex(apiKey))
        return id
      })
      return { account_id: accountId, api_key: apiKey }
    },

    async setPlan(accountId: number, plan: Plan) {
      const row = await repo.updatePlan(db, accountId, plan)
      cache.clear()
      if (!row) throw notFound('Account not found')
      return { account_id: row.id, name: row.name, plan: row.plan }
    },

    async createKey(accountId: number): Promise<string> {
      if (!(await repo.findAccount(db, accountId))) throw notFound('Account not found')
      const apiKey = newApiKey()
      await repo.insertKeyHash(db, accountId, sha256Hex(apiKey))
      return apiKey
    },

    async revokeKey(apiKey: string): Promise<void> {
      cache.clear()
      if (!(await repo.revokeKeyHash(db, sha256Hex(apiKey), ctx.clock.now()))) {
        throw notFound('No active API key matches')
      }
    },

    /**
     * Wall-clock time on purpose: the cache's lifetime is real time, whatever a test's clock says. Requests that
     * miss together (every connection of a client, the moment the entry expires) share one lookup.
     */
    async resolveKey(keyHash: string) {
      const cached = cache.get(keyHash, Date.now())
      if (cached) return cached
      let pending = resolving.get(keyHash)
      if (!pending) {
        pending = repo.findAccountByKeyHash(db, keyHash).finally(() => resolving.delete(keyHash))
        resolving.set(keyHash, pending)
      }
      const account = await pending
      if (account) cache.set(keyHash, account, Date.now())
      return account
    },

    /**
     * Start-up bootstrap (contract §2). With BOOTSTRAP_API_KEY: make sure an account holds that key (idempotent).
     * Without it and with no account at all: create one and return its key so the caller prints it once.
     */
    async bootstrap(bootstrapKey: string | undefined): Promise<CreatedAccount | null> {
      return retriedTransaction(db, async (tx) => {
        await repo.lockBootstrap(tx)
        if (bootstrapKey) {
          const hash = sha256Hex(bootstrapKey)
          if (await repo.keyHashExists(tx, hash)) return null
          const id = await repo.insertAccount(tx, 'Bootstrap account', 'marketer')
          await repo.insertKeyHash(tx, id, hash)
          return null
        }
        if ((await repo.countAccounts(tx)) > 0) return null
        const apiKey = newApiKey()
        const id = await repo.insertAccount(tx, 'Default account', 'marketer')
        await repo.insertKeyHash(tx, id, sha256Hex(apiKey))
        return { account_id: id, api_key: apiKey }
      })
    },
  }
}

export type AccountService = ReturnType<typeof createAccountService>
