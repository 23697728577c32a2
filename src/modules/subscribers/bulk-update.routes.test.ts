import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { contactOf, createList, memberOf, setStatus, suppress } from './subscribers.write.test-helpers.js'

const NOW = new Date('2026-01-02T03:04:05Z')

describe('PUT /lists/{id}/update-subscribers-bulk', async () => {
  const clock = new ManualClock(NOW)
  const t = await startTestApp({ clock })
  const other = await t.createAccount()
  const update = (listId: number, body: unknown, opts: { key?: string; path?: string } = {}) =>
    t.req('PUT', `/lists/${listId}/${opts.path ?? 'update-subscribers-bulk'}`, {
      body,
      ...(opts.key ? { key: opts.key } : {}),
    })
  const members = async (listId: number, data: Record<string, unknown>[]) => {
    const res = await t.req('POST', `/lists/${listId}/subscribe-bulk`, { body: { subscriber_data: data } })
    assert.equal(res.status, 200, res.text)
  }

  it('updates the members given, overwrites their tags, and ignores other addresses', async () => {
    const listId = await createList(t)
    const elsewhere = await createList(t)
    await members(listId, [
      {
        email: 'a@example.cz',
        name: 'A',
        surname: 'Old',
        tags: ['x', 'y'],
        custom_fields: { keep: 1, size: 'S' },
      },
      { email: 'b+c@example.cz', name: 'B' },
    ])
    await members(elsewhere, [{ email: 'outsider@example.cz', name: 'Out' }])
    const res = await update(listId, {
      subscriber_data: [
        {
          email: 'A@example.cz',
          name: 'Anna',
          tags: ['z'],
          custom_fields: { ' SIZE ': 'L', Color: { value: 'red', type: 'string' } },
        },
        { email: 'b+c@example.cz', surname: 'Bílá', tags: [] },
        { email: 'outsider@example.cz', name: 'Changed' },
        { email: 'nobody@example.cz', name: 'Nobody' },
      ],
    })
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.deepEqual(res.body, { updates: 2 })
    const a = await contactOf(t, 'a@example.cz')
    assert.equal(a?.name, 'Anna')
    assert.equal(a?.surname, 'Old')
    assert.deepEqual(a?.tags, ['z'])
    assert.deepEqual(a?.customFields, { keep: 1, size: 'L', color: { value: 'red', type: 'string' } })
    const b = await contactOf(t, 'b+c@example.cz')
    assert.equal(b?.surname, 'Bílá')
    assert.deepEqual(b?.tags, [])
    assert.equal((await contactOf(t, 'outsider@example.cz'))?.name, 'Out')
    assert.equal(await contactOf(t, 'nobody@example.cz'), undefined)
  })

  it('answers on the singular alias too', async () => {
    const listId = await createList(t)
    await members(listId, [{ email: 'alias@example.cz' }])
    const res = await update(
      listId,
      { subscriber_data: [{ email: 'alias@example.cz', name: 'Via alias' }] },
      { path: 'update-subscriber-bulk' },
    )
    assert.deepEqual(res.body, { updates: 1 })
    assert.equal((await contactOf(t, 'alias@example.cz'))?.name, 'Via alias')
  })

  it('status 1 brings back an unsubscribed member only with allow_resubscribe; other fields update anyway', async () => {
    const listId = await createList(t)
    await members(listId, [{ email: 'u@example.cz', name: 'U', status: 2 }])
    const ignored = await update(listId, {
      subscriber_data: [{ email: 'u@example.cz', name: 'U2', status: 1 }],
    })
    assert.deepEqual(ignored.body, { updates: 1 })
    assert.equal((await memberOf(t, listId, 'u@example.cz'))?.status, 2)
    assert.equal((await contactOf(t, 'u@example.cz'))?.name, 'U2')

    clock.advance(1000)
    const back = await update(listId, {
      subscriber_data: [{ email: 'u@example.cz', status: 1 }],
      allow_resubscribe: true,
    })
    assert.deepEqual(back.body, { updates: 1 })
    const m = await memberOf(t, listId, 'u@example.cz')
    assert.equal(m?.status, 1)
    assert.equal(m?.unsubscribedAt, null)
    assert.equal(m?.subscribedAt.getTime(), NOW.getTime() + 1000)
  })

  it('status 2 unsubscribes; status 4 suppresses account-wide and counts one hard bounce', async () => {
    const listId = await createList(t)
    const elsewhere = await createList(t)
    const unsubscribedThere = await createList(t)
    await members(listId, [{ email: 'two@example.cz' }, { email: 'four@example.cz' }])
    await members(elsewhere, [{ email: 'four@example.cz' }, { email: 'two@example.cz' }])
    await members(unsubscribedThere, [{ email: 'four@example.cz', status: 2 }])
    clock.set(new Date('2026-02-03T04:05:06Z'))
    await update(listId, {
      subscriber_data: [
        { email: 'two@example.cz', status: '2' },
        { email: 'four@example.cz', status: 4 },
      ],
    })
    const two = await memberOf(t, listId, 'two@example.cz')
    assert.equal(two?.status, 2)
    assert.equal(two?.unsubscribedAt?.toISOString(), '2026-02-03T04:05:06.000Z')
    assert.equal((await memberOf(t, listId, 'four@example.cz'))?.status, 4)
    // The bounce is the address's: live memberships elsewhere go to 4 as well; an unsubscribe there stays.
    assert.deepEqual(
      [
        (await memberOf(t, elsewhere, 'four@example.cz'))?.status,
        (await memberOf(t, unsubscribedThere, 'four@example.cz'))?.status,
        (await memberOf(t, elsewhere, 'two@example.cz'))?.status,
      ],
      [4, 2, 1],
    )
    let four = await contactOf(t, 'four@example.cz')
    assert.equal(four?.suppressed, 'hard_bounce')
    assert.equal(four?.bouncedHard, 1)
    // Repeating the 4 is not a second bounce; without allow_resubscribe a 1 changes nothing.
    await update(listId, { subscriber_data: [{ email: 'four@example.cz', status: 4 }] })
    await update(listId, { subscriber_data: [{ email: 'four@example.cz', status: 1 }] })
    four = await contactOf(t, 'four@example.cz')
    assert.equal(four?.bouncedHard, 1)
    assert.equal(four?.suppressed, 'hard_bounce')
    assert.equal((await memberOf(t, listId, 'four@example.cz'))?.status, 4)
    await update(listId, {
      subscriber_data: [{ email: 'four@example.cz', status: 1 }],
      allow_resubscribe: true,
    })
    assert.equal((await memberOf(t, listId, 'four@example.cz'))?.status, 1)
    assert.equal((await contactOf(t, 'four@example.cz'))?.suppressed, null)
  })

  it('allow_resubscribe also brings back a complained member and lifts the suppression', async () => {
    const listId = await createList(t)
    await members(listId, [{ email: 'spam@example.cz' }])
    await setStatus(t, listId, 'spam@example.cz', 5)
    await suppress(t, 'spam@example.cz', 'complaint')
    await update(listId, { subscriber_data: [{ email: 'spam@example.cz', status: 1 }] })
    assert.equal((await memberOf(t, listId, 'spam@example.cz'))?.status, 5)
    await update(listId, {
      subscriber_data: [{ email: 'spam@example.cz', status: 1 }],
      allow_resubscribe: 'true',
    })
    assert.equal((await memberOf(t, listId, 'spam@example.cz'))?.status, 1)
    assert.equal((await contactOf(t, 'spam@example.cz'))?.suppressed, null)
  })

  it('rejects bad entries with 400, listing every bad field, and writes nothing', async () => {
    const listId = await createList(t)
    await members(listId, [{ email: 'v@example.cz', name: 'V' }])
    const res = await update(listId, {
      subscriber_data: [
        { email: 'v@example.cz', name: 'Changed' },
        { name: 'no email' },
        { email: 'nope' },
        { email: 'v@example.cz', custom_fields: ['a', 'b'] },
        { email: 'v@example.cz', custom_fields: 'text' },
        { email: 'v@example.cz', custom_fields: { Key: 1, ' key ': 2 } },
        { email: 'v@example.cz', custom_fields: { big: 'x'.repeat(4991) } },
        { email: 'v@example.cz', tags: 'vip' },
        { email: 'v@example.cz', tags: ['x'.repeat(51)] },
        { email: 'v@example.cz', tags: Array.from({ length: 41 }, (_, i) => `tag-${i}-`.padEnd(50, 'x')) },
        { email: 'v@example.cz', status: 6 },
        { email: 'v@example.cz', status: 5 },
      ],
    })
    assert.equal(res.status, 400)
    assert.deepEqual(res.body, {
      errors: {
        'subscriber_data.1.email': ['The email field is required.'],
        'subscriber_data.2.email': ['The email must be a valid email address.'],
        'subscriber_data.3.custom_fields': ['The custom_fields must be an object.'],
        'subscriber_data.4.custom_fields': ['The custom_fields must be an object.'],
        'subscriber_data.5.custom_fields': [
          'The custom_fields contain the key "key" more than once (keys ignore case).',
        ],
        'subscriber_data.6.custom_fields': ['The custom_fields must not be greater than 5000 characters.'],
        'subscriber_data.7.tags': ['The tags must be an array.'],
        'subscriber_data.8.tags': ['Each of the tags must not be greater than 50 characters.'],
        'subscriber_data.9.tags': ['The tags must not be greater than 2000 characters in total.'],
        'subscriber_data.10.status': ['The selected status is invalid.'],
        'subscriber_data.11.status': ['The selected status is invalid.'],
      },
    })
    assert.equal((await contactOf(t, 'v@example.cz'))?.name, 'V')
  })

  it('measures custom fields after normalising keys: exactly 5000 characters pass', async () => {
    const listId = await createList(t)
    await members(listId, [{ email: 'size@example.cz' }])
    // {"k":"…"} is 8 characters around the value.
    const exact = { ' K ': 'x'.repeat(4992) }
    const ok = await update(listId, { subscriber_data: [{ email: 'size@example.cz', custom_fields: exact }] })
    assert.deepEqual(ok.body, { updates: 1 })
    const over = { K: 'x'.repeat(4993) }
    const bad = await update(listId, { subscriber_data: [{ email: 'size@example.cz', custom_fields: over }] })
    assert.equal(bad.status, 400)
  })

  it('counts characters, not UTF-16 units: 50 emoji are a tag, 255 a name; one more is refused', async () => {
    const listId = await createList(t)
    await members(listId, [{ email: 'emoji@example.cz' }])
    // Each of these is one character and two UTF-16 units.
    const tag = '😀'.repeat(50)
    const name = '😀'.repeat(255)
    const ok = await update(listId, { subscriber_data: [{ email: 'emoji@example.cz', tags: [tag], name }] })
    assert.deepEqual(ok.body, { updates: 1 })
    const c = await contactOf(t, 'emoji@example.cz')
    assert.deepEqual(c?.tags, [tag])
    assert.equal(c?.name, name)
    const bad = await update(listId, {
      subscriber_data: [{ email: 'emoji@example.cz', tags: [`${tag}x`], name: `${name}x` }],
    })
    assert.equal(bad.status, 400)
    assert.deepEqual(Object.keys(bad.body.errors).sort(), [
      'subscriber_data.0.name',
      'subscriber_data.0.tags',
    ])
  })

  it('answers 400 for a missing or malformed subscriber_data and a non-boolean allow_resubscribe', async () => {
    const listId = await createList(t)
    assert.deepEqual((await update(listId, {})).body, {
      errors: { subscriber_data: ['The subscriber_data field is required.'] },
    })
    const notArray = await update(listId, { subscriber_data: 5, allow_resubscribe: 'maybe' })
    assert.equal(notArray.status, 400)
    assert.deepEqual(notArray.body, {
      errors: {
        subscriber_data: ['The subscriber_data must be an array.'],
        allow_resubscribe: ['The allow_resubscribe field must be true or false.'],
      },
    })
    const noBody = await t.req('PUT', `/lists/${listId}/update-subscribers-bulk`)
    assert.equal(noBody.status, 400)
  })

  it('reads at most 3000 entries; the rest are silently ignored', async () => {
    const listId = await createList(t)
    const data = Array.from({ length: 3001 }, (_, i) => ({ email: `m${i}@example.cz` }))
    await members(listId, data.slice(0, 3000))
    await members(listId, data.slice(3000))
    const res = await update(listId, {
      subscriber_data: data.map((d) => ({ ...d, name: 'Bulk', custom_fields: { n: 1 } })),
    })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { updates: 3000 })
    assert.equal((await contactOf(t, 'm2999@example.cz'))?.name, 'Bulk')
    assert.equal((await contactOf(t, 'm3000@example.cz'))?.name, '')
    // An invalid entry past the cap is not looked at either.
    const again = await update(listId, { subscriber_data: [...data.slice(0, 3000), { email: 'bad' }] })
    assert.deepEqual(again.body, { updates: 3000 })
  })

  it("answers 404 {message} for another account's list and 401 without a key", async () => {
    const listId = await createList(t)
    await members(listId, [{ email: 'mine@example.cz', name: 'Mine' }])
    const body = { subscriber_data: [{ email: 'mine@example.cz', name: 'Theirs' }] }
    const theirs = await update(listId, body, { key: other.key })
    assert.equal(theirs.status, 404)
    assert.deepEqual(theirs.body, (await update(999999, body)).body)
    assert.equal(typeof theirs.body.message, 'string')
    assert.equal((await contactOf(t, 'mine@example.cz'))?.name, 'Mine')
    const nokey = await t.req('PUT', `/lists/${listId}/update-subscribers-bulk`, { key: null, body })
    assert.deepEqual(nokey.body, { message: 'Unauthorized' })
    assert.equal(nokey.status, 401)
  })

  it('merges an address given twice in order: fields and status of the first entry stay', async () => {
    const list = (await t.req('POST', '/lists', { body: { name: 'Twice' } })).body.id as number
    await t.req('POST', `/lists/${list}/subscribe`, { body: { subscriber_data: { email: 'y@twice.cz' } } })
    const res = await t.req('PUT', `/lists/${list}/update-subscribers-bulk`, {
      body: {
        subscriber_data: [
          { email: 'y@twice.cz', status: 2, name: 'Yvonne', tags: ['a'] },
          { email: 'Y@TWICE.cz', surname: 'Young', tags: ['b'] },
        ],
      },
    })
    assert.equal(res.status, 200, res.text)
    const s = (await t.req('GET', `/lists/${list}/subscriber/y@twice.cz`)).body.subscriber
    assert.deepEqual([s.status, s.name, s.surname, s.tags], [2, 'Yvonne', 'Young', ['b']])
  })
})
