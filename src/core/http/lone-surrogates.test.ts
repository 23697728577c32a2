import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { mayHoldLoneSurrogate, replaceLoneSurrogates } from './lone-surrogates.js'

describe('lone surrogates in a JSON body', () => {
  it('are replaced by U+FFFD in strings and keys, at any depth; pairs stay', () => {
    const parsed = JSON.parse(
      '{"a\\ud800":["x\\udfffy",{"k":"\\ud83d\\ude00 \\ud83d"}],"n":1,"ok":"\\ud83d\\ude00","nil":null}',
    ) as unknown
    assert.deepEqual(replaceLoneSurrogates(parsed), {
      'a\ufffd': ['x\ufffdy', { k: '\ud83d\ude00 \ufffd' }],
      n: 1,
      ok: '\ud83d\ude00',
      nil: null,
    })
    assert.equal(replaceLoneSurrogates('\udc00\ud800'), '\ufffd\ufffd')
  })

  it('are looked for only when the text spells a surrogate escape', () => {
    assert.equal(mayHoldLoneSurrogate('{"name":"Jana \\u00e9"}'), false)
    assert.equal(mayHoldLoneSurrogate('{"name":"\\uD800"}'), true)
    assert.equal(mayHoldLoneSurrogate('{"name":"\\udc00"}'), true)
  })

  it('are stored as U+FFFD whether the value goes to a text column or a jsonb one', async () => {
    const t = await startTestApp({ worker: false })
    const list = (await t.req('POST', '/lists', { body: { name: 'L' } })).body.id as number
    // JSON.stringify writes a lone surrogate as its escape, as a client's encoder would.
    const sub = await t.req('POST', `/lists/${list}/subscribe`, {
      body: {
        subscriber_data: { email: 'a@x.cz', name: 'a\ud800b', custom_fields: { 'k\udfff': 'v\ud800' } },
        skip_confirmation: true,
      },
    })
    assert.equal(sub.status, 200, sub.text)
    const read = await t.req('GET', `/lists/${list}/subscriber/a@x.cz`)
    assert.equal(read.body.subscriber.name, 'a\ufffdb')
    assert.deepEqual(read.body.subscriber.custom_fields, { 'k\ufffd': 'v\ufffd' })
    // Through a jsonb parameter: was a 500.
    const gone = await t.req('DELETE', '/tracker/transaction/delete-bulk', {
      body: { transaction_data: [{ order_id: 'o\ud800', shop: 's' }] },
    })
    assert.equal(gone.status, 200, gone.text)
  })
})
