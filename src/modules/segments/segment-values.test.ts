import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'

/**
 * Values as clients write them (POST /lists/{id}/segments answers the live count): numbers as text (PHP), a country
 * in lower case or by name (stored as the upper-case code), the rating (a subscriber field that is not text).
 */
describe('segment conditions on values as clients write them', async () => {
  const t = await startTestApp({ worker: false })
  const list = (await t.req('POST', '/lists', { body: { name: 'L' } })).body.id as number
  const bulk = await t.req('POST', `/lists/${list}/subscribe-bulk`, {
    body: {
      subscriber_data: [
        { email: 'a@x.cz', country: 'cz', rating: 5, custom_fields: { age: 9, score: '9' } },
        { email: 'b@x.cz', country: 'SK', rating: 1, custom_fields: { age: 20, score: '20' } },
        {
          email: 'c@x.cz',
          country: 'sk',
          rating: 2,
          custom_fields: { age: { value: '100', type: 'int' }, score: '100' },
        },
      ],
    },
  })
  assert.equal(bulk.status, 200)
  const count = async (filter: unknown) => {
    const r = await t.req('POST', `/lists/${list}/segments`, { body: { name: 's', filter } })
    assert.equal(r.status, 200, r.text)
    return r.body.subscribers as number
  }

  it('gt/lt with a numeric string value (as PHP clients send numbers) compare numerically', async () => {
    // 9, 20, 100: two are greater than 10, one is less.
    assert.equal(await count({ field: 'age', op: 'gt', value: 10 }), 2, 'sanity: a JSON number works')
    assert.equal(
      await count({ field: 'age', op: 'gt', value: '10' }),
      2,
      'age > "10" (text order: "9" > "10")',
    )
    assert.equal(
      await count({ field: 'score', op: 'lt', value: '10' }),
      1,
      'score < "10" (text order: "9" > "10")',
    )
  })

  it('country compares as stored: the API upper-cases it on input, so the condition must too', async () => {
    // subscribe stored 'CZ' for 'cz'; GET shows 'CZ'. A filter written as the client wrote the field finds nobody.
    assert.equal(await count({ field: 'country', op: 'eq', value: 'CZ' }), 1, 'sanity')
    assert.equal(await count({ field: 'country', op: 'eq', value: 'cz' }), 1)
    assert.equal(await count({ field: 'country', op: 'eq', value: 'sk' }), 2)
    // A name is stored as its code, so the condition reads it as one too.
    assert.equal(await count({ field: 'country', op: 'eq', value: 'Slovensko' }), 2)
  })

  it('rating (a field of the subscriber, api.md) can be filtered on', async () => {
    assert.equal(await count({ field: 'rating', op: 'gt', value: 3 }), 1)
  })
})
