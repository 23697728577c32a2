import { STATUS } from './subscribers.schemas.js'

/**
 * Where one `POST /lists/{id}/subscribe` leaves a membership (contract §3, suppression rules). Kept apart
 * from the SQL so each transition can be read, and tested, on its own.
 */
export interface SubscribeStatusInput {
  /** Status before this request; null when the person is not in the list yet. */
  current: number | null
  /** The contact's account-wide suppression. */
  suppressed: 'hard_bounce' | 'complaint' | null
  /** `subscriber_data.status`: 1, 2 or 6 (validated before). */
  requested: number | undefined
  doubleOptin: boolean
  skipConfirmation: boolean
  resubscribe: boolean
}

export interface SubscribeStatusOutcome {
  status: number
  /** Clear contacts.suppressed: an explicit resubscribe brought the person back. */
  clearSuppression: boolean
}

const ACTIVE: readonly number[] = [STATUS.subscribed, STATUS.unconfirmed]

export function suppressionStatus(suppressed: 'hard_bounce' | 'complaint'): number {
  return suppressed === 'hard_bounce' ? STATUS.hardBounce : STATUS.complaint
}

export function decideSubscribeStatus(i: SubscribeStatusInput): SubscribeStatusOutcome {
  // A double-opt-in list asks for confirmation unless the caller skips it; an explicit 6 always waits for it.
  const active =
    i.requested === STATUS.unconfirmed || (i.doubleOptin && !i.skipConfirmation)
      ? STATUS.unconfirmed
      : STATUS.subscribed
  const target = i.requested === STATUS.unsubscribed ? STATUS.unsubscribed : active
  const back = i.resubscribe && target !== STATUS.unsubscribed

  let status: number
  if (i.current === null) {
    // A suppressed address joins a new list in its suppressed state unless the caller resubscribes it.
    status = i.suppressed && !i.resubscribe ? suppressionStatus(i.suppressed) : target
  } else if (i.current === STATUS.subscribed) {
    // Never back to unconfirmed: the person has confirmed (or needed no confirmation) already.
    status = target === STATUS.unsubscribed ? STATUS.unsubscribed : STATUS.subscribed
  } else if (i.current === STATUS.unconfirmed) {
    status = target
  } else {
    // Unsubscribed, bounced or complained: only an explicit resubscribe brings the person back.
    status = back ? target : i.current
  }
  return {
    status,
    clearSuppression: i.suppressed !== null && i.resubscribe && ACTIVE.includes(status),
  }
}
