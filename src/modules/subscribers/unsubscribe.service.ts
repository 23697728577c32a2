import type { AppContext } from '../../core/context.js'
import { FieldErrorBag, notFound, subscriberNotInList } from '../../core/http/errors.js'
import { requireList } from '../lists/index.js'
import { checkEmail, validOrThrow } from './subscriber-fields.validation.js'
import { toUnsubscribeReply } from './subscribers.schemas.js'
import * as repo from './subscribers.write.repo.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'clock'>

export function createUnsubscribeService(ctx: Ctx) {
  return {
    /** `DELETE /lists/{id}/unsubscribe`: status 2 in this list; repeating it changes nothing. */
    async unsubscribe(accountId: number, listId: number, rawEmail: string) {
      await requireList(ctx, accountId, listId)
      const bag = new FieldErrorBag()
      const email = validOrThrow(bag, checkEmail(rawEmail, 'email', bag))
      const now = ctx.clock.now()
      return retriedTransaction(ctx.db, async (tx) => {
        const member = await repo.findMember(tx, accountId, listId, email, true)
        if (!member) throw subscriberNotInList()
        const membership = await repo.unsubscribeMembership(tx, member.membership.id, now)
        // Only a list deleted meanwhile takes the membership away while the contact is locked.
        if (!membership) throw notFound('List not found')
        return toUnsubscribeReply(member.contact, membership)
      })
    },
  }
}
