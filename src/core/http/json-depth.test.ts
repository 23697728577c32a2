import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { MAX_JSON_DEPTH, nestedDeeperThan } from './json-depth.js'

/** `levels` arrays, one inside the other, around 1. */
const nested = (levels: number): unknown => {
  let v: unknown = 1
  for (let i = 0; i < levels; i++) v = [v]
  return v
}
/** The same as JSON text (JSON.stringify itself overflows its stack on the deepest). */
const nestedText = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`

describe('request bodies nested too deeply', async () => {
  const t = await startTestApp({ worker: false })
  const list = (await t.req('POST', '/lists', { body: { name: 'L' } })).body.id as number
  await t.req('POST', `/lists/${list}/subscribe`, { body: { subscriber_data: { email: 'a@x.cz' } } })
  const order = (id: string, levels: number) =>
    t.req('POST', '/tracker/transaction', {
      body: `{"transaction":{"order_id":"${id}","email":"a@x.cz","amount":1,"props":${nestedText(levels)}}}`,
    })

  it('counts levels of arrays and objects only, the value itself being the first', () => {
    assert.equal(nestedDeeperThan(nested(3), 3), false)
    assert.equal(nestedDeeperThan(nested(4), 3), true)
    assert.equal(nestedDeeperThan({ a: [{ b: 'x' }], c: 'y' }, 3), false)
    assert.equal(nestedDeeperThan({ a: [{ b: {} }] }, 3), true)
    assert.equal(nestedDeeperThan('text', 0), false)
    assert.equal(nestedDeeperThan(nested(1_000_000), MAX_JSON_DEPTH), true)
  })

  it('refuses a body past the limit with 400, before anything is written; a deep one within it is kept', async () => {
    // The body and `transaction` are two levels: props may nest the rest.
    const within = await order('o1', MAX_JSON_DEPTH - 2)
    assert.equal(within.status, 200, within.text)
    for (const levels of [MAX_JSON_DEPTH - 1, 5_000, 100_000]) {
      const res = await order(`o${levels}`, levels)
      assert.equal(res.status, 400, res.text)
      assert.deepEqual(res.body, {
        message: `The request body is nested too deeply (more than ${MAX_JSON_DEPTH} levels).`,
      })
    }
    const kept = await t.req('GET', '/tracker/transaction')
    assert.equal(kept.status, 200, kept.text)
    const orders = kept.body.transactions as { order_id: string }[]
    assert.deepEqual(
      orders.map((o) => o.order_id),
      ['o1'],
    )
  })
})
