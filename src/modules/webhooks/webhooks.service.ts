import type { AppContext } from '../../core/context.js'
import { fieldError } from '../../core/http/errors.js'
import { parseOutboundUrl, privateTargetError } from '../../core/net/outbound-url.js'
import { newWebhookSecret } from './webhook-signature.js'
import * as repo from './webhooks.repo.js'
import { retriedTransaction } from '../../core/db/retry.js'

export function createWebhookService(ctx: Pick<AppContext, 'db' | 'clock' | 'config'>) {
  return {
    /** Sets the account's one webhook URL; a new URL gets a new signing secret. */
    async set(accountId: number, rawUrl: string) {
      const parsed = parseOutboundUrl(rawUrl.trim())
      if ('error' in parsed) throw fieldError('url', parsed.error)
      // Names are judged again on every delivery, on the address dialled; this only catches the obvious.
      const privateTarget = privateTargetError(parsed.url, ctx.config.allowPrivateNetwork)
      if (privateTarget) throw fieldError('url', privateTarget)
      await repo.upsertWebhook(ctx.db, accountId, parsed.url.href, newWebhookSecret(), ctx.clock.now())
      return { success: true }
    },

    async get(accountId: number) {
      const row = await repo.findWebhook(ctx.db, accountId)
      if (!row) return { url: null }
      return { url: row.url, secret: row.secret, active: row.disabledAt === null }
    },

    /** Removes the webhook and drops what still waited for it; succeeds when there was none too. */
    async remove(accountId: number) {
      await retriedTransaction(ctx.db, async (tx) => {
        await repo.deleteWebhook(tx, accountId)
        await repo.dropPending(tx, accountId)
      })
      return { success: true }
    },
  }
}
