import { createHmac } from 'node:crypto'
import type { AppContext } from '../../core/context.js'
import { normalizeEmail } from '../../core/http/email.js'
import { notFound } from '../../core/http/errors.js'
import { pseudonymiseAddress } from '../events/index.js'
import { pseudonymiseSignals } from '../signals/index.js'
import { pseudonymisePurchases } from '../transactions/index.js'
import { deleteContact } from './subscriber-delete.repo.js'

/**
 * A stable stand-in for an erased address: keyed with the installation secret so it cannot be reversed by
 * hashing known addresses, and the same for every row, so logs still count one person.
 */
function pseudonym(secret: string, accountId: number, email: string): string {
  const h = createHmac('sha256', secret).update(`erase:${accountId}:${email}`).digest('hex').slice(0, 24)
  return `erased-${h}@erased.invalid`
}

/**
 * `DELETE /subscribers/{email}/delete` (GDPR erasure, contract §3): the person leaves every list of the account
 * and the address is replaced in the mail and event logs, on purchases and pending signals, all in one
 * transaction. Tracker events go with the contact.
 */
export function createSubscriberDeleteService(ctx: Pick<AppContext, 'db' | 'linkSecret'>) {
  return {
    async erase(accountId: number, rawEmail: string) {
      const email = normalizeEmail(rawEmail)
      const deleted = await ctx.db.transaction(async (tx) => {
        if (!(await deleteContact(tx, accountId, email))) return false
        const stand = pseudonym(ctx.linkSecret, accountId, email)
        await pseudonymiseAddress(tx, accountId, email, stand)
        await pseudonymisePurchases(tx, accountId, email, stand)
        await pseudonymiseSignals(tx, accountId, email, stand)
        return true
      })
      if (!deleted) throw notFound('Subscriber not found')
      return { deleted: true }
    },
  }
}
