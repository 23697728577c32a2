import type { AppContext } from '../../core/context.js'
import { notFound } from '../../core/http/errors.js'
import { redirectTarget } from '../../core/http/redirect-target.js'
import { readConfirmToken } from './confirmation.links.js'
import * as repo from './confirmation.repo.js'
import { emitSignal } from '../signals/index.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'linkSecret' | 'log'>

export interface ConfirmOutcome {
  /** True when this request moved the membership from 6 to 1 (not on a repeat click). */
  confirmed: boolean
  /** Where to send the browser: the list's sub_confirmed_page when it is an http(s) URL. */
  redirectTo: string | null
}

export function createConfirmationService(ctx: Ctx) {
  return {
    /**
     * A click on the link. Anything but a genuine token is a plain 404, so the route tells nothing about
     * lists or people; a genuine one always ends on the confirmed page, whatever the membership's status.
     */
    async confirm(token: string): Promise<ConfirmOutcome> {
      const target = readConfirmToken(ctx.linkSecret, token)
      if (!target) throw notFound()
      const now = ctx.clock.now()
      // The list's subscribe-triggered automations start from the signal, committed with the confirmation.
      const confirmed = await retriedTransaction(ctx.db, async (tx) => {
        const done = await repo.confirmMembership(tx, target, now)
        if (done)
          await emitSignal(tx, {
            accountId: done.accountId,
            kind: 'subscribe',
            email: done.email,
            payload: { list_id: target.listId },
            at: now,
          })
        return done !== undefined
      })
      if (confirmed) ctx.log.info({ listId: target.listId }, 'subscription confirmed')
      const next = await repo.findConfirmedPage(ctx.db, target)
      return { confirmed, redirectTo: next ? redirectTarget(next.page, next.email) : null }
    },
  }
}
