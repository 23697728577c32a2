import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { decideSubscribeStatus, type SubscribeStatusInput } from './subscribe-status.js'

const base: SubscribeStatusInput = {
  current: null,
  suppressed: null,
  requested: undefined,
  doubleOptin: false,
  skipConfirmation: false,
  resubscribe: false,
}
const decide = (over: Partial<SubscribeStatusInput>) => decideSubscribeStatus({ ...base, ...over })

describe('subscribe status transitions', () => {
  it('a new member: 1, or 6 on a double opt-in list unless confirmation is skipped', () => {
    assert.equal(decide({}).status, 1)
    assert.equal(decide({ doubleOptin: true }).status, 6)
    assert.equal(decide({ doubleOptin: true, requested: 1 }).status, 6)
    assert.equal(decide({ doubleOptin: true, skipConfirmation: true }).status, 1)
    assert.equal(decide({ requested: 6 }).status, 6)
    assert.equal(decide({ requested: 2, doubleOptin: true }).status, 2)
  })

  it('a suppressed address joins suppressed unless resubscribed', () => {
    assert.deepEqual(decide({ suppressed: 'hard_bounce' }), { status: 4, clearSuppression: false })
    assert.deepEqual(decide({ suppressed: 'complaint' }), { status: 5, clearSuppression: false })
    assert.deepEqual(decide({ suppressed: 'complaint', resubscribe: true }), {
      status: 1,
      clearSuppression: true,
    })
    // Asking to be recorded as unsubscribed does not lift a suppression.
    assert.deepEqual(decide({ suppressed: 'hard_bounce', resubscribe: true, requested: 2 }), {
      status: 2,
      clearSuppression: false,
    })
  })

  it('a subscribed member stays subscribed (never back to unconfirmed) unless it asks for 2', () => {
    assert.equal(decide({ current: 1, doubleOptin: true }).status, 1)
    assert.equal(decide({ current: 1, requested: 6 }).status, 1)
    assert.equal(decide({ current: 1, requested: 2 }).status, 2)
    assert.deepEqual(decide({ current: 1, suppressed: 'hard_bounce', resubscribe: true }), {
      status: 1,
      clearSuppression: true,
    })
  })

  it('an unconfirmed member is subscribed by skip_confirmation, else stays unconfirmed', () => {
    assert.equal(decide({ current: 6, doubleOptin: true }).status, 6)
    assert.equal(decide({ current: 6, doubleOptin: true, skipConfirmation: true }).status, 1)
  })

  it('unsubscribed, bounced and complained members come back only with resubscribe', () => {
    for (const current of [2, 4, 5]) {
      assert.equal(decide({ current }).status, current)
      assert.equal(decide({ current, resubscribe: true }).status, 1)
      assert.equal(decide({ current, resubscribe: true, doubleOptin: true }).status, 6)
    }
  })
})
