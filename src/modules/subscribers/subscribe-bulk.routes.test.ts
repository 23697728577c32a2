import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { contactOf, countMembers, createList, memberOf, suppress } from './subscribers.write.test-helpers.js'

describe('POST /lists/{id}/subscribe-bulk', async () => {
  const t = await startTestApp()
  const other = await t.createAccount()
  const bulk = (listId: number, body: unknown, key?: string) =>
    t.req('POST', `/lists/${listId}/subscribe-bulk`, { body, ...(key ? { key } : {}) })

  it('creates contacts and memberships and counts the entries written', async () => {
    const listId = await createList(t)
    const res = await bulk(listId, {
      subscriber_data: [
        { email: 'a@example.cz', name: 'Anna', tags: ['x'], custom_fields: { Size: 'M' }, source: 'import' },
        { email: 'B+tag@Example.cz', surname: 'Bílá', phone: 777123456 },
        { email: 'c@example.cz', status: 2 },
      ],
    })
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.deepEqual(res.body, { inserts: 3 })
    const a = await contactOf(t, 'a@example.cz')
    assert.equal(a?.name, 'Anna')
    assert.deepEqual(a?.tags, ['x'])
    assert.deepEqual(a?.customFields, { size: 'M' })
    assert.equal((await contactOf(t, 'b+tag@example.cz'))?.phone, '777123456')
    assert.equal((await memberOf(t, listId, 'a@example.cz'))?.source, 'import')
    assert.equal((await memberOf(t, listId, 'a@example.cz'))?.status, 1)
    const c = await memberOf(t, listId, 'c@example.cz')
    assert.equal(c?.status, 2)
    assert.ok(c?.unsubscribedAt)
  })

  it('writes an address given twice once, as its last entry says', async () => {
    const listId = await createList(t)
    const res = await bulk(listId, {
      subscriber_data: [
        { email: 'twice@example.cz', name: 'First' },
        { email: 'TWICE@example.cz', name: 'Last' },
      ],
    })
    assert.deepEqual(res.body, { inserts: 1 })
    assert.equal((await contactOf(t, 'twice@example.cz'))?.name, 'Last')
  })

  it('updates existing contacts by default (tags replaced, kept when not given) and not with update_existing false', async () => {
    const listId = await createList(t)
    await bulk(listId, {
      subscriber_data: [{ email: 'ex@example.cz', name: 'One', city: 'Brno', tags: ['a'] }],
    })
    const upd = await bulk(listId, {
      subscriber_data: [{ email: 'ex@example.cz', name: 'Two', tags: ['b', 'a'], custom_fields: { k: 1 } }],
    })
    assert.deepEqual(upd.body, { inserts: 1 })
    let c = await contactOf(t, 'ex@example.cz')
    assert.equal(c?.name, 'Two')
    assert.equal(c?.city, 'Brno')
    assert.deepEqual(c?.tags, ['b', 'a'])
    assert.deepEqual(c?.customFields, { k: 1 })
    await bulk(listId, { subscriber_data: [{ email: 'ex@example.cz', tags: ['c'] }] })
    await bulk(listId, { subscriber_data: [{ email: 'ex@example.cz', name: 'Two' }] })
    assert.deepEqual((await contactOf(t, 'ex@example.cz'))?.tags, ['c'])

    const keep = await bulk(listId, {
      subscriber_data: [{ email: 'ex@example.cz', name: 'Three' }, { email: 'fresh@example.cz' }],
      update_existing: false,
    })
    // The existing member changed nowhere; only the new address was written.
    assert.deepEqual(keep.body, { inserts: 1 })
    c = await contactOf(t, 'ex@example.cz')
    assert.equal(c?.name, 'Two')

    // An existing contact joining another list is written even without update_existing.
    const second = await createList(t)
    const joined = await bulk(second, {
      subscriber_data: [{ email: 'ex@example.cz' }],
      update_existing: false,
    })
    assert.deepEqual(joined.body, { inserts: 1 })
    assert.equal((await memberOf(t, second, 'ex@example.cz'))?.status, 1)
  })

  it('unsubscribes members asking for 2 and brings back unsubscribed ones only with resubscribe', async () => {
    const listId = await createList(t)
    await bulk(listId, { subscriber_data: [{ email: 'u1@example.cz' }, { email: 'u2@example.cz' }] })
    await bulk(listId, { subscriber_data: [{ email: 'u1@example.cz', status: 2 }] })
    assert.equal((await memberOf(t, listId, 'u1@example.cz'))?.status, 2)
    await bulk(listId, { subscriber_data: [{ email: 'u1@example.cz' }] })
    assert.equal((await memberOf(t, listId, 'u1@example.cz'))?.status, 2)
    await bulk(listId, { subscriber_data: [{ email: 'u1@example.cz' }], resubscribe: true })
    const m = await memberOf(t, listId, 'u1@example.cz')
    assert.equal(m?.status, 1)
    assert.equal(m?.unsubscribedAt, null)
  })

  it('a suppressed address joins suppressed; resubscribe lifts it', async () => {
    const first = await createList(t)
    const second = await createList(t)
    await bulk(first, { subscriber_data: [{ email: 'hb@example.cz' }, { email: 'sp@example.cz' }] })
    await suppress(t, 'hb@example.cz', 'hard_bounce')
    await suppress(t, 'sp@example.cz', 'complaint')
    await bulk(second, { subscriber_data: [{ email: 'hb@example.cz' }, { email: 'sp@example.cz' }] })
    assert.equal((await memberOf(t, second, 'hb@example.cz'))?.status, 4)
    assert.equal((await memberOf(t, second, 'sp@example.cz'))?.status, 5)
    const res = await bulk(second, { subscriber_data: [{ email: 'hb@example.cz' }], resubscribe: true })
    assert.deepEqual(res.body, { inserts: 1 })
    assert.equal((await memberOf(t, second, 'hb@example.cz'))?.status, 1)
    assert.equal((await contactOf(t, 'hb@example.cz'))?.suppressed, null)
    assert.equal((await contactOf(t, 'sp@example.cz'))?.suppressed, 'complaint')
  })

  it('takes a status by its list-page name as well as its number (a C# client sends "subscribed")', async () => {
    const listId = await createList(t)
    const res = await bulk(listId, {
      subscriber_data: [
        { email: 'named.in@example.cz', status: 'subscribed' },
        { email: 'named.out@example.cz', status: ' Unsubscribed ' },
      ],
    })
    assert.deepEqual([res.status, res.body], [200, { inserts: 2 }])
    assert.equal((await memberOf(t, listId, 'named.in@example.cz'))?.status, 1)
    assert.equal((await memberOf(t, listId, 'named.out@example.cz'))?.status, 2)
    // A name stands for its number, and only the numbers a bulk import takes are taken.
    const refused = await bulk(listId, {
      subscriber_data: [
        { email: 'a@example.cz', status: 'not_confirmed' },
        { email: 'b@example.cz', status: 'deleted' },
        { email: 'c@example.cz', status: 'constructor' },
      ],
    })
    assert.deepEqual(Object.keys(refused.body.errors), [
      'subscriber_data.0.status',
      'subscriber_data.1.status',
      'subscriber_data.2.status',
    ])
  })

  it('validates every entry with 422 and subscriber_data.<index>.<field>, writing nothing', async () => {
    const listId = await createList(t)
    const res = await bulk(listId, {
      subscriber_data: [
        { email: 'good@example.cz' },
        { email: 'bad address' },
        { name: 'no email' },
        { email: 'st@example.cz', status: 6, tags: 'vip', custom_fields: { a: 1, A: 2 } },
        'not an object',
      ],
    })
    assert.equal(res.status, 422)
    assert.deepEqual(res.body.errors, {
      'subscriber_data.1.email': ['The email must be a valid email address.'],
      'subscriber_data.2.email': ['The email field is required.'],
      'subscriber_data.3.status': ['The selected status is invalid.'],
      'subscriber_data.3.tags': ['The tags must be an array.'],
      'subscriber_data.3.custom_fields': [
        'The custom_fields contain the key "a" more than once (keys ignore case).',
      ],
      'subscriber_data.4': ['The subscriber_data.4 must be an object.'],
    })
    assert.equal(await countMembers(t, listId), 0)
    const notArray = await bulk(listId, { subscriber_data: 'x' })
    assert.deepEqual(notArray.body, {
      errors: { subscriber_data: ['The subscriber_data must be an array.'] },
    })
    const missing = await bulk(listId, {})
    assert.equal(missing.status, 422)
    assert.deepEqual(missing.body, {
      errors: { subscriber_data: ['The subscriber_data field is required.'] },
    })
  })

  it('reads at most 3000 entries and silently ignores the rest', async () => {
    const listId = await createList(t)
    const entries: unknown[] = Array.from({ length: 3000 }, (_, i) => ({ email: `cap${i}@example.cz` }))
    entries.push({ email: 'beyond@example.cz' })
    const res = await bulk(listId, { subscriber_data: entries })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { inserts: 3000 })
    assert.equal(await countMembers(t, listId), 3000)
    assert.equal(await contactOf(t, 'beyond@example.cz'), undefined)
    // An invalid entry past the cap does not fail the call either.
    entries[3000] = { email: 'not valid' }
    const again = await bulk(listId, { subscriber_data: entries })
    assert.equal(again.status, 200)
  })

  it("answers 404 for another account's list and 401 without a key", async () => {
    const listId = await createList(t)
    const body = { subscriber_data: [{ email: 'x@example.cz' }] }
    const theirs = await bulk(listId, body, other.key)
    assert.equal(theirs.status, 404)
    assert.deepEqual(theirs.body, (await bulk(999999, body)).body)
    assert.equal(await countMembers(t, listId), 0)
    const nokey = await t.req('POST', `/lists/${listId}/subscribe-bulk`, { key: null, body })
    assert.equal(nokey.status, 401)
  })

  it('merges an address given twice in order: an unsubscribe is not undone by a later entry', async () => {
    const list = (await t.req('POST', '/lists', { body: { name: 'Twice' } })).body.id as number
    const res = await t.req('POST', `/lists/${list}/subscribe-bulk`, {
      body: {
        subscriber_data: [
          { email: 'twice@x.cz', status: 2, tags: ['a'], custom_fields: { k1: 'v1' } },
          { email: 'TWICE@x.cz', name: 'Xavier', tags: ['b'], custom_fields: { k2: 'v2' } },
        ],
      },
    })
    assert.equal(res.status, 200, res.text)
    const s = (await t.req('GET', `/lists/${list}/subscriber/twice@x.cz`)).body.subscriber
    // Tags as the last entry gives them, as two calls would leave them (each replaces the contact's tags).
    assert.deepEqual(
      [s.status, s.name, s.tags, s.custom_fields],
      [2, 'Xavier', ['b'], { k1: 'v1', k2: 'v2' }],
    )
    await t.req('POST', `/lists/${list}/subscribe-bulk`, {
      body: {
        subscriber_data: [
          { email: 'twice@x.cz', tags: ['c'] },
          { email: 'twice@x.cz', tags: [] },
        ],
      },
    })
    assert.deepEqual((await t.req('GET', `/lists/${list}/subscriber/twice@x.cz`)).body.subscriber.tags, [])
  })
})
