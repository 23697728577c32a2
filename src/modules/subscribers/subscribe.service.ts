import type { AppContext } from '../../core/context.js'
import { FieldErrorBag } from '../../core/http/errors.js'
import { queueConfirmationMail } from '../confirmation/index.js'
import { wakeSenders } from '../delivery/index.js'
import { requireList } from '../lists/index.js'
import { emitSignal } from '../signals/index.js'
import { erasedAddressHash } from './erased-suppressions.js'
import { forgetErased } from './erased-suppressions.repo.js'
import { decideSubscribeStatus } from './subscribe-status.js'
import { flagValue, parseEntry, validOrThrow } from './subscriber-fields.validation.js'
import { STATUS, toSubscribeReply, type MembershipRow } from './subscribers.schemas.js'
import type { SubscribeBodyT } from './subscribers.write.schemas.js'
import * as repo from './subscribers.write.repo.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'jobs' | 'erasureSecret' | 'config' | 'linkSecret'>

/** Statuses `subscriber_data.status` may ask for on subscribe. */
const SUBSCRIBE_STATUSES = [STATUS.subscribed, STATUS.unsubscribed, STATUS.unconfirmed] as const

const OUT_OF_LIST: readonly number[] = [STATUS.unsubscribed, STATUS.hardBounce, STATUS.complaint]

/** Timestamps of a status change: leaving the list stamps unsubscribed_at, coming back starts anew. */
export function transitionTimes(
  from: number,
  to: number,
  now: Date,
): Pick<MembershipRow, 'status'> & Partial<Pick<MembershipRow, 'subscribedAt' | 'unsubscribedAt'>> {
  if (to === STATUS.unsubscribed) return { status: to, unsubscribedAt: now }
  if (OUT_OF_LIST.includes(from) && !OUT_OF_LIST.includes(to))
    return { status: to, subscribedAt: now, unsubscribedAt: null }
  return { status: to }
}

/**
 * `subscriber_data` with the body's own `tags` and `groups` where it has none (SubscribeBody: why). An empty outer
 * `tags` is left out: SDKs built from the documentation send one by default, and tags given replace a contact's.
 */
function withOuterTagsAndGroups(body: SubscribeBodyT): SubscribeBodyT['subscriber_data'] {
  const data = { ...body.subscriber_data }
  const outerTags = Array.isArray(body.tags) && body.tags.length === 0 ? undefined : body.tags
  if (data.tags == null && outerTags != null) data.tags = outerTags
  if (data.groups == null && body.groups != null) data.groups = body.groups
  return data
}

export function createSubscribeService(ctx: Ctx) {
  return {
    /**
     * `POST /lists/{id}/subscribe`: the contact, its membership and (on a double opt-in list) the
     * confirmation-mail job, all in one transaction.
     */
    async subscribe(accountId: number, listId: number, body: SubscribeBodyT) {
      const list = await requireList(ctx, accountId, listId)
      const bag = new FieldErrorBag()
      const entry = validOrThrow(
        bag,
        parseEntry(
          withOuterTagsAndGroups(body),
          'subscriber_data',
          { statuses: SUBSCRIBE_STATUSES, emailRequired: true },
          bag,
        ),
      )
      const now = ctx.clock.now()
      const skipConfirmation = flagValue(body.skip_confirmation, false)

      let confirmationQueued = false
      const reply = await retriedTransaction(ctx.db, async (tx) => {
        confirmationQueued = false
        const addressHash = erasedAddressHash(ctx.erasureSecret, accountId, entry.email)
        const tagsBefore = entry.fields.tags ? await repo.tagsOf(tx, accountId, entry.email) : []
        let contact = await repo.upsertContact(
          tx,
          accountId,
          entry.email,
          entry.fields,
          flagValue(body.update_existing, false),
          addressHash,
          now,
        )
        // The suppression lives on the contact from now on (a no-op for a contact suppressed before).
        if (contact.suppressed) await forgetErased(tx, accountId, addressHash)
        const current = await repo.lockMembership(tx, listId, contact.id)
        const decision = decideSubscribeStatus({
          current: current?.status ?? null,
          suppressed: contact.suppressed ?? null,
          requested: entry.status,
          doubleOptin: list.doubleOptin,
          skipConfirmation,
          resubscribe: flagValue(body.resubscribe, false),
        })
        if (decision.clearSuppression) contact = await repo.clearSuppression(tx, contact.id, now)

        let membership: MembershipRow
        if (!current) {
          membership = await repo.insertMembership(tx, {
            accountId,
            listId,
            contactId: contact.id,
            status: decision.status,
            source: entry.source ?? 'api',
            now,
          })
        } else if (current.status !== decision.status) {
          membership = await repo.updateMembership(
            tx,
            current.id,
            transitionTimes(current.status, decision.status, now),
            now,
          )
        } else {
          membership = current
        }

        // A fresh wait for confirmation asks for it; one already waiting was asked before. A caller that skips
        // confirmation and still asks for status 6 runs its own opt-in (it sets 1 once the person confirms with
        // it): no mail of ours beside theirs.
        if (
          membership.status === STATUS.unconfirmed &&
          current?.status !== STATUS.unconfirmed &&
          !skipConfirmation
        )
          confirmationQueued = await queueConfirmationMail(ctx, tx, {
            accountId,
            listId,
            contactId: contact.id,
          })

        // Automations start from these signals, committed with the change (a double opt-in subscriber's
        // start at confirmation instead).
        const added = contact.tags.filter((t) => !tagsBefore.includes(t))
        if (added.length)
          await emitSignal(tx, {
            accountId,
            kind: 'tag',
            email: contact.email,
            payload: { tags: added },
            at: now,
          })
        if (
          flagValue(body.trigger_autoresponders, false) &&
          membership.status === STATUS.subscribed &&
          current?.status !== STATUS.subscribed
        )
          await emitSignal(tx, {
            accountId,
            kind: 'subscribe',
            email: contact.email,
            payload: { list_id: listId },
            at: now,
          })

        return toSubscribeReply(contact, membership, current?.status === STATUS.subscribed)
      })
      // Committed: the confirmation goes out now, not on a sender's next idle poll.
      if (confirmationQueued) wakeSenders(ctx)
      return reply
    },
  }
}
