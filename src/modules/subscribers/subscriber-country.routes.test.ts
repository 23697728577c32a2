import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { contactOf, createList } from './subscribers.write.test-helpers.js'

/** Shop hooks send the customer's country as the shop names it; every subscriber write stores its code. */
describe('country given as a name', async () => {
  const t = await startTestApp({ worker: false })
  const listId = await createList(t)
  const read = async (email: string) =>
    (await t.req('GET', `/lists/${listId}/subscriber/${email}`)).body.subscriber.country

  it('subscribe and update-subscriber store the code; a name of no country is 422 and changes nothing', async () => {
    const made = await t.req('POST', `/lists/${listId}/subscribe`, {
      body: { subscriber_data: { email: 'jana@example.cz', name: 'Jana', country: 'Česká republika' } },
    })
    assert.equal(made.status, 200, made.text)
    assert.equal(await read('jana@example.cz'), 'CZ')

    const update = (country: string) =>
      t.req('PUT', `/lists/${listId}/update-subscriber`, {
        body: { email: 'jana@example.cz', subscriber_data: { name: 'Janka', country } },
      })
    const bad = await update('Atlantis')
    assert.equal(bad.status, 422)
    assert.deepEqual(bad.body, {
      errors: { 'subscriber_data.country': ['The country must be a two-letter code or a country name.'] },
    })
    const c = await contactOf(t, 'jana@example.cz')
    assert.deepEqual([c?.name, c?.country], ['Jana', 'CZ'], 'unchanged after a 422')

    assert.equal((await update('Slovensko')).status, 200)
    assert.equal(await read('jana@example.cz'), 'SK')
  })

  it('the bulk writes read names too', async () => {
    const bulk = await t.req('POST', `/lists/${listId}/subscribe-bulk`, {
      body: { subscriber_data: [{ email: 'b@example.cz', country: 'Deutschland' }] },
    })
    assert.equal(bulk.status, 200, bulk.text)
    assert.equal(await read('b@example.cz'), 'DE')
    const updated = await t.req('PUT', `/lists/${listId}/update-subscribers-bulk`, {
      body: { subscriber_data: [{ email: 'b@example.cz', country: 'Czech Republic' }] },
    })
    assert.equal(updated.status, 200, updated.text)
    assert.equal(await read('b@example.cz'), 'CZ')
  })
})
