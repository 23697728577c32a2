import type { AppContext } from '../../core/context.js'
import { isUniqueViolation } from '../../core/db/errors.js'
import { FieldErrorBag, fieldError, subscriberNotInList } from '../../core/http/errors.js'
import { requireList } from '../lists/index.js'
import { UPDATE_STATUSES } from './bulk-update.service.js'
import { erasedAddressHash } from './erased-suppressions.js'
import { restoreErasedOnto } from './erased-suppressions.repo.js'
import { checkEmail, flagValue, parseEntry, validOrThrow } from './subscriber-fields.validation.js'
import { toSubscriberDetail } from './subscribers.schemas.js'
import { updateMembers } from './bulk-update.repo.js'
import type { UpdateSubscriberBodyT } from './subscribers.write.schemas.js'
import * as repo from './subscribers.write.repo.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'erasureSecret'>

const emailTaken = () => fieldError('subscriber_data.email', 'The email has already been taken.')

export function createUpdateSubscriberService(ctx: Ctx) {
  return {
    /**
     * `PUT /lists/{id}/update-subscriber`: the bulk update's rules for one member (same SQL, so the two
     * cannot drift apart), plus a change of address. Validation failures are 422 here.
     */
    async updateSubscriber(accountId: number, listId: number, body: UpdateSubscriberBodyT) {
      await requireList(ctx, accountId, listId)
      const bag = new FieldErrorBag()
      const given = body.subscriber_data
      // Without a top-level email, the one in subscriber_data names the subscriber (tag-manager clients send
      // the contact's data alone, as for subscribe), checked there; it is then no change of address.
      const inData = given && !Array.isArray(given) ? given.email : undefined
      const fromData = body.email === undefined && typeof inData === 'string' && inData.trim() !== ''
      const email = fromData ? undefined : checkEmail(body.email, 'email', bag)
      const entry = parseEntry(
        Array.isArray(given) ? {} : (given ?? {}),
        'subscriber_data',
        { statuses: UPDATE_STATUSES, emailRequired: false },
        bag,
      )
      const data = validOrThrow(bag, entry)
      const address = validOrThrow(bag, fromData ? data.email : email)
      const now = ctx.clock.now()

      return retriedTransaction(ctx.db, async (tx) => {
        const member = await repo.findMember(tx, accountId, listId, address, true)
        if (!member) throw subscriberNotInList()
        let current = member.contact.email
        if (data.email !== undefined && data.email !== current) {
          if (await repo.emailTaken(tx, accountId, data.email, member.contact.id)) throw emailTaken()
          try {
            await repo.changeEmail(tx, member.contact.id, data.email, now)
          } catch (err) {
            // Another request took the address between the check and the write.
            if (isUniqueViolation(err)) throw emailTaken()
            throw err
          }
          current = data.email
          // An address erased while suppressed stays suppressed when a contact moves onto it; a status 1
          // with allow_resubscribe below lifts it as for any suppressed member.
          const hash = erasedAddressHash(ctx.erasureSecret, accountId, current)
          await restoreErasedOnto(tx, accountId, member.contact.id, hash, now)
        }
        await updateMembers(
          tx,
          [{ email: current, fields: data.fields, status: data.status, source: data.source }],
          { accountId, listId, allowResubscribe: flagValue(body.allow_resubscribe, false), now },
        )
        const updated = await repo.findMember(tx, accountId, listId, current)
        if (!updated) throw subscriberNotInList()
        return toSubscriberDetail(updated.contact, updated.membership)
      })
    },
  }
}
