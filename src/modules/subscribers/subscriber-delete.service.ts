import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { normalizeEmail } from '../../core/http/email.js'
import { notFound } from '../../core/http/errors.js'
import { pseudonymiseAddress } from '../events/index.js'
import { pseudonymiseSignals } from '../signals/index.js'
import { pseudonymisePurchases } from '../transactions/index.js'
import { erasedAddressHash, erasedStandIn } from './erased-suppressions.js'
import { rememberErased } from './erased-suppressions.repo.js'
import { deleteContact } from './subscriber-delete.repo.js'
import { retriedTransaction } from '../../core/db/retry.js'

/**
 * What a module above this one does to its own rows of an erased address, in the erasure's transaction (the
 * module list hands these in: the automation runs and log, say). `pseudonym` is the one stand-in every table
 * gets, so logs still count one person.
 */
export type ErasureStep = (
  tx: Executor,
  erased: { accountId: number; email: string; pseudonym: string; now: Date },
) => Promise<void>

/**
 * `DELETE /subscribers/{email}/delete` (GDPR erasure, contract §3): the person leaves every list of the account
 * and the address is replaced in the mail and event logs, on purchases and pending signals, all in one
 * transaction. Tracker events go with the contact. An address suppressed by a hard bounce or complaint is
 * remembered by keyed hash only, so erasing it never lets it be mailed again. `steps` do the same to the
 * tables of modules above this one.
 */
export function createSubscriberDeleteService(
  ctx: Pick<AppContext, 'db' | 'clock' | 'linkSecret' | 'erasureSecret'>,
  steps: readonly ErasureStep[] = [],
) {
  return {
    async erase(accountId: number, rawEmail: string) {
      const email = normalizeEmail(rawEmail)
      const deleted = await retriedTransaction(ctx.db, async (tx) => {
        const contact = await deleteContact(tx, accountId, email)
        if (!contact) return false
        if (contact.suppressed) {
          const hash = erasedAddressHash(ctx.erasureSecret, accountId, email)
          await rememberErased(tx, accountId, hash, contact.suppressed, ctx.clock.now())
        }
        const stand = erasedStandIn(ctx.linkSecret, accountId, email)
        await pseudonymiseAddress(tx, accountId, email, stand)
        await pseudonymisePurchases(tx, accountId, email, stand)
        await pseudonymiseSignals(tx, accountId, email, stand)
        for (const step of steps) await step(tx, { accountId, email, pseudonym: stand, now: ctx.clock.now() })
        return true
      })
      if (!deleted) throw notFound('Subscriber not found')
      return { deleted: true }
    },
  }
}
