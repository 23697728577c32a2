import type { AppContext } from '../../core/context.js'
import { FieldErrorBag } from '../../core/http/errors.js'
import { requireList } from '../lists/index.js'
import { erasedAddressHash } from './erased-suppressions.js'
import {
  bulkItems,
  flagValue,
  inLockOrder,
  mergePerEmail,
  parseEntry,
  validOrThrow,
} from './subscriber-fields.validation.js'
import { STATUS } from './subscribers.schemas.js'
import * as repo from './subscribe-bulk.repo.js'
import { BULK_LIMIT, type SubscribeBulkBodyT } from './subscribers.write.schemas.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'erasureSecret'>

/** A bulk entry is subscribed (1) unless it asks to be recorded as unsubscribed (2); no confirmation mail. */
const BULK_STATUSES = [STATUS.subscribed, STATUS.unsubscribed] as const

export function createSubscribeBulkService(ctx: Ctx) {
  return {
    /**
     * `POST /lists/{id}/subscribe-bulk`: up to 3000 entries in four set-based statements in one transaction.
     * Returns how many distinct addresses were written (contact created or updated, or membership changed).
     */
    async subscribeBulk(accountId: number, listId: number, body: SubscribeBulkBodyT) {
      await requireList(ctx, accountId, listId)
      const bag = new FieldErrorBag()
      const items = validOrThrow(bag, bulkItems(body.subscriber_data, BULK_LIMIT, bag))
      const parsed = items.map(({ key, raw }) =>
        parseEntry(raw, `subscriber_data.${key}`, { statuses: BULK_STATUSES, emailRequired: true }, bag),
      )
      bag.throwIfAny()
      // An address twice in one call is written once, as its entries say in order.
      const batch = mergePerEmail(parsed.filter((e) => e !== undefined))
      if (batch.length === 0) return { inserts: 0 }
      // Hashed here for every entry (microseconds each) so the insert finds erased suppressions in one go.
      const hashed = batch.map((e) => ({
        ...e,
        addressHash: erasedAddressHash(ctx.erasureSecret, accountId, e.email),
      }))
      const now = ctx.clock.now()
      const resubscribe = flagValue(body.resubscribe, false)
      const opts = { accountId, listId, resubscribe, now }

      // Contacts and existing memberships are written in lock order; new memberships in the order given, which
      // their ids keep and a list's page of subscribers shows.
      const locking = inLockOrder(batch)
      const written = await retriedTransaction(ctx.db, async (tx) => {
        const updateExisting = flagValue(body.update_existing, true)
        const ids = new Set(await repo.upsertContacts(tx, inLockOrder(hashed), { ...opts, updateExisting }))
        const add = (more: number[]) => more.forEach((id) => ids.add(id))
        if (resubscribe) add(await repo.liftSuppressions(tx, locking, opts))
        const joined = [
          ...(await repo.moveMemberships(tx, locking, opts)),
          ...(await repo.insertMemberships(tx, batch, opts)),
        ]
        add(joined)
        // Automations start (from the signals outbox) for those now subscribed, only when asked to.
        if (flagValue(body.trigger_autoresponders, false)) await repo.emitSubscribeSignals(tx, joined, opts)
        return ids.size
      })
      return { inserts: written }
    },
  }
}
