import type { AppContext } from '../../core/context.js'
import { FieldErrorBag } from '../../core/http/errors.js'
import { requireList } from '../lists/index.js'
import {
  bulkItems,
  checkFlag,
  isPlainObject,
  inLockOrder,
  mergePerEmail,
  parseEntry,
} from './subscriber-fields.validation.js'
import { STATUS } from './subscribers.schemas.js'
import * as repo from './bulk-update.repo.js'
import { BULK_LIMIT } from './subscribers.write.schemas.js'

type Ctx = Pick<AppContext, 'db' | 'clock'>

/** Statuses an update may set (api.md: the bulk update accepts only 1, 2 and 4). */
export const UPDATE_STATUSES = [STATUS.subscribed, STATUS.unsubscribed, STATUS.hardBounce] as const

/** The one endpoint whose validation failures are 400, not 422 (api.md, contract §1). */
export const BULK_UPDATE_INVALID = 400

export function createBulkUpdateService(ctx: Ctx) {
  return {
    /**
     * `PUT /lists/{id}/update-subscribers-bulk`: the body is checked here in full (the route lets anything
     * through) so that every bad field of every entry is reported at once, with 400. Only members of the
     * list are updated; other addresses are ignored. One statement, so it is atomic on its own.
     */
    async updateBulk(accountId: number, listId: number, body: unknown) {
      await requireList(ctx, accountId, listId)
      const bag = new FieldErrorBag()
      const b = isPlainObject(body) ? body : {}
      const items = bulkItems(b.subscriber_data, BULK_LIMIT, bag)
      const allowResubscribe = checkFlag(b.allow_resubscribe, 'allow_resubscribe', false, bag)
      const parsed = (items ?? []).map(({ key, raw }) =>
        parseEntry(raw, `subscriber_data.${key}`, { statuses: UPDATE_STATUSES, emailRequired: true }, bag),
      )
      bag.throwIfAny(BULK_UPDATE_INVALID)
      const batch = inLockOrder(mergePerEmail(parsed.filter((e) => e !== undefined)))
      if (batch.length === 0) return { updates: 0 }
      const now = ctx.clock.now()
      // One statement outside a transaction: aborted to break a deadlock, it is run again by the pool (client.ts).
      const updates = await repo.updateMembers(ctx.db, batch, { accountId, listId, allowResubscribe, now })
      return { updates }
    },
  }
}
