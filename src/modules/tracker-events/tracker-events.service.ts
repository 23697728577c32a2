import type { AppContext } from '../../core/context.js'
import { isValidEmail, normalizeEmail } from '../../core/http/email.js'
import { fieldError, notFound, subscriberNotInList } from '../../core/http/errors.js'
import { lastPage, toPage } from '../../core/db/pagination.js'
import { sqlDateTime } from '../../core/http/formats.js'
import { emitSignal } from '../signals/index.js'
import {
  findSubscriberId,
  insertTrackerEvent,
  subscriberEventsPage,
  type TrackerEventRow,
} from './tracker-events.repo.js'
import {
  DEFAULT_EVENTS_PAGE,
  MAX_EVENT_VALUE,
  type SubscriberEventsQueryT,
  type TrackerEventBodyT,
  type TrackerEventT,
} from './tracker-events.schemas.js'
import { retriedTransaction } from '../../core/db/retry.js'
import { longerThan } from '../../core/http/text-length.js'

const text = (v: string | undefined) => (v ?? '').trim()

function answer(row: TrackerEventRow, email: string): TrackerEventT {
  return {
    id: row.id,
    email,
    category: row.category,
    action: row.action,
    label: row.label,
    property: row.property,
    value: row.value,
    created_at: sqlDateTime(row.createdAt),
  }
}

export function createTrackerEventService(ctx: Pick<AppContext, 'db' | 'clock'>) {
  return {
    /**
     * `POST /tracker/events`: stores the event for the subscriber and emits it as an `event` signal for
     * event-triggered automations, both in one transaction. The address must be in one of the account's
     * lists; otherwise 404 `{errors:[..]}`. `value` is kept (and answered) JSON-encoded; its limit counts
     * the characters as sent: a string's own, or the JSON text's of anything else; characters, not UTF-16 units
     * (an emoji is one, as Laravel's mb_strlen counts it).
     */
    async track(accountId: number, body: TrackerEventBodyT): Promise<TrackerEventT> {
      const e = body.event
      const email = normalizeEmail(e.email)
      if (email === '') throw fieldError('event.email', 'The email field is required.')
      if (!isValidEmail(email)) throw fieldError('event.email', 'The email must be a valid email address.')
      const raw = e.value === undefined ? null : e.value
      const value = JSON.stringify(raw)
      if (longerThan(typeof raw === 'string' ? raw : value, MAX_EVENT_VALUE))
        throw fieldError('event.value', `The value must not be greater than ${MAX_EVENT_VALUE} characters.`)
      const now = ctx.clock.now()
      const row = await retriedTransaction(ctx.db, async (tx) => {
        const contactId = await findSubscriberId(tx, accountId, email)
        if (contactId === undefined) return undefined
        const stored = await insertTrackerEvent(tx, {
          accountId,
          contactId,
          category: text(e.category),
          action: text(e.action),
          label: text(e.label),
          property: text(e.property),
          value,
          createdAt: now,
        })
        await emitSignal(tx, {
          accountId,
          kind: 'event',
          email,
          at: now,
          payload: {
            event_id: stored.id,
            category: stored.category,
            action: stored.action,
            label: stored.label,
            property: stored.property,
            value,
          },
        })
        return stored
      })
      if (!row) throw subscriberNotInList('Subscriber not found in this account')
      return answer(row, email)
    },

    /**
     * `GET /subscribers/{email}/events` (a CRM sync of Ecomail's reads it): the person's tracker events, newest
     * first, each as `POST /tracker/events` answered it plus `timestamp`. An address the account has no
     * contact of: 404, as for the person's transactions.
     */
    async ofSubscriber(accountId: number, rawEmail: string, query: SubscriberEventsQueryT) {
      const email = normalizeEmail(rawEmail)
      const page = toPage(query.page, query.per_page, DEFAULT_EVENTS_PAGE)
      const filter = { category: text(query.category), action: text(query.action) }
      const found = await subscriberEventsPage(ctx.db, accountId, email, filter, page.perPage, page.offset)
      if (!found.known) throw notFound('Subscriber not found')
      return {
        current_page: page.page,
        data: found.rows.map((row) => {
          const event = answer(row, email)
          return { ...event, timestamp: event.created_at }
        }),
        per_page: page.perPage,
        total: found.total,
        last_page: lastPage(found.total, page.perPage),
      }
    },
  }
}
