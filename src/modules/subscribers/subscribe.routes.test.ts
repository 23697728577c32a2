import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import {
  contactOf,
  countMembers,
  createList,
  memberOf,
  setStatus,
  suppress,
} from './subscribers.write.test-helpers.js'

const NOW = new Date('2026-01-02T03:04:05.678Z')

describe('POST /lists/{id}/subscribe', async () => {
  const clock = new ManualClock(NOW)
  const t = await startTestApp({ clock })
  const other = await t.createAccount()
  const listId = await createList(t, { name: 'Newsletter' })
  const subscribe = (body: unknown, id = listId, key?: string) =>
    t.req('POST', `/lists/${id}/subscribe`, { body, ...(key ? { key } : {}) })

  it('creates the contact with its fields and answers with the subscriber', async () => {
    const res = await subscribe({
      subscriber_data: {
        email: '  Jana.Novak+news@Example.CZ ',
        name: 'Jana',
        surname: 'Nováková',
        gender: 'female',
        company: 'Shop s.r.o.',
        city: 'Praha',
        zip: 11000,
        country: 'cz',
        phone: '+420123456789',
        birthday: '1990-05-01',
        source: 'form',
        tags: ['vip', ' news ', 'vip'],
        groups: { interests: ['shoes'] },
        custom_fields: { ' Shoe_Size ': 42, Color: { value: 'red', type: 'string' } },
      },
    })
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.deepEqual(res.body, {
      id: res.body.id,
      name: 'Jana',
      surname: 'Nováková',
      email: 'jana.novak+news@example.cz',
      gender: 'female',
      bounce_soft: 0,
      bounced_hard: 0,
      bounce_message: null,
      inserted_at: '2026-01-02 03:04:05',
      already_subscribed: false,
      status: 1,
      list_id: listId,
    })
    assert.equal(typeof res.body.id, 'number')
    const c = await contactOf(t, 'jana.novak+news@example.cz')
    assert.equal(c?.zip, '11000')
    assert.equal(c?.country, 'CZ')
    assert.equal(c?.company, 'Shop s.r.o.')
    assert.deepEqual(c?.tags, ['vip', 'news'])
    assert.deepEqual(c?.groups, { interests: ['shoes'] })
    assert.deepEqual(c?.customFields, { shoe_size: 42, color: { value: 'red', type: 'string' } })
    const m = await memberOf(t, listId, 'jana.novak+news@example.cz')
    assert.equal(m?.source, 'form')
    assert.equal(m?.subscribedAt.toISOString(), NOW.toISOString())
    assert.equal(m?.unsubscribedAt, null)
  })

  it('says already_subscribed and leaves the fields alone without update_existing', async () => {
    const body = { subscriber_data: { email: 'keep@example.cz', name: 'Old', tags: ['a'] } }
    assert.equal((await subscribe(body)).body.already_subscribed, false)
    const again = await subscribe({ subscriber_data: { email: 'KEEP@example.cz', name: 'New', tags: ['b'] } })
    assert.equal(again.status, 200)
    assert.equal(again.body.already_subscribed, true)
    assert.equal(again.body.name, 'Old')
    assert.deepEqual((await contactOf(t, 'keep@example.cz'))?.tags, ['a'])
  })

  it('with update_existing writes only the given fields and replaces the tags', async () => {
    await subscribe({
      subscriber_data: {
        email: 'upd@example.cz',
        name: 'Petr',
        surname: 'Malý',
        city: 'Brno',
        tags: ['a', 'b'],
        custom_fields: { size: 'M', color: 'blue' },
      },
    })
    const res = await subscribe({
      subscriber_data: {
        email: 'upd@example.cz',
        name: 'Pavel',
        tags: ['b', 'c'],
        custom_fields: { SIZE: 'L' },
      },
      update_existing: true,
    })
    assert.equal(res.body.name, 'Pavel')
    assert.equal(res.body.surname, 'Malý')
    assert.equal(res.body.already_subscribed, true)
    const c = await contactOf(t, 'upd@example.cz')
    assert.equal(c?.city, 'Brno')
    assert.deepEqual(c?.tags, ['b', 'c'])
    assert.deepEqual(c?.customFields, { size: 'L', color: 'blue' })
  })

  it('keeps the tags when none are given, and clears them with an empty list (a shop plugin taking its opt-in tag off)', async () => {
    // Ecomail's WooCommerce plugin reads the tags, adds its own and drops `wp_newsletter` for a customer who
    // did not opt in, then subscribes with the list it computed: the list sent must be the list kept.
    const email = 'woo@example.cz'
    await subscribe({ subscriber_data: { email, tags: ['wp_order', 'wp_newsletter'] } })
    await subscribe({ subscriber_data: { email, name: 'Eva' }, update_existing: true })
    assert.deepEqual((await contactOf(t, email))?.tags, ['wp_order', 'wp_newsletter'])
    await subscribe({ subscriber_data: { email, tags: ['wp_order'], status: 2 }, update_existing: true })
    assert.deepEqual((await contactOf(t, email))?.tags, ['wp_order'])
    // Nothing but blanks (an empty form select), or an empty list beside subscriber_data (an SDK's default): no
    // tags given, none cleared.
    await subscribe({ subscriber_data: { email, tags: [''] }, update_existing: true })
    await subscribe({ subscriber_data: { email }, tags: [], update_existing: true })
    assert.deepEqual((await contactOf(t, email))?.tags, ['wp_order'])
    await subscribe({ subscriber_data: { email }, tags: ['outer'], update_existing: true })
    assert.deepEqual((await contactOf(t, email))?.tags, ['outer'])
    await subscribe({ subscriber_data: { email, tags: [] }, update_existing: true })
    assert.deepEqual((await contactOf(t, email))?.tags, [])
  })

  it('records a requested status 2 as unsubscribed; 6 as unconfirmed', async () => {
    const res = await subscribe({ subscriber_data: { email: 'two@example.cz', status: 2 } })
    assert.equal(res.body.status, 2)
    assert.equal(
      (await memberOf(t, listId, 'two@example.cz'))?.unsubscribedAt?.toISOString(),
      NOW.toISOString(),
    )
    const six = await subscribe({ subscriber_data: { email: 'six@example.cz', status: '6' } })
    assert.equal(six.body.status, 6)
  })

  it('keeps an unsubscribed member out unless resubscribe is given', async () => {
    await subscribe({ subscriber_data: { email: 'gone@example.cz' } })
    await t.req('DELETE', `/lists/${listId}/unsubscribe`, { body: { email: 'gone@example.cz' } })
    const stays = await subscribe({ subscriber_data: { email: 'gone@example.cz' } })
    assert.equal(stays.body.status, 2)
    assert.equal(stays.body.already_subscribed, false)
    clock.advance(60_000)
    const back = await subscribe({ subscriber_data: { email: 'gone@example.cz' }, resubscribe: true })
    assert.equal(back.body.status, 1)
    const m = await memberOf(t, listId, 'gone@example.cz')
    assert.equal(m?.unsubscribedAt, null)
    assert.equal(m?.subscribedAt.getTime(), NOW.getTime() + 60_000)
  })

  it('a suppressed address joins a new list suppressed; resubscribe lifts the suppression', async () => {
    const second = await createList(t, { name: 'Second' })
    await subscribe({ subscriber_data: { email: 'bounced@example.cz' } })
    await suppress(t, 'bounced@example.cz', 'hard_bounce')
    const joined = await subscribe({ subscriber_data: { email: 'bounced@example.cz' } }, second)
    assert.equal(joined.body.status, 4)

    await subscribe({ subscriber_data: { email: 'spam@example.cz' } })
    await suppress(t, 'spam@example.cz', 'complaint')
    assert.equal((await subscribe({ subscriber_data: { email: 'spam@example.cz' } }, second)).body.status, 5)

    const stays = await subscribe({ subscriber_data: { email: 'bounced@example.cz' } }, second)
    assert.equal(stays.body.status, 4)
    assert.equal((await contactOf(t, 'bounced@example.cz'))?.suppressed, 'hard_bounce')
    const back = await subscribe(
      { subscriber_data: { email: 'bounced@example.cz' }, resubscribe: true },
      second,
    )
    assert.equal(back.body.status, 1)
    assert.equal((await contactOf(t, 'bounced@example.cz'))?.suppressed, null)
  })

  it('brings a hard-bounced or complained membership back only with resubscribe', async () => {
    await subscribe({ subscriber_data: { email: 'hb@example.cz' } })
    await setStatus(t, listId, 'hb@example.cz', 5)
    assert.equal((await subscribe({ subscriber_data: { email: 'hb@example.cz' } })).body.status, 5)
    const back = await subscribe({ subscriber_data: { email: 'hb@example.cz' }, resubscribe: true })
    assert.equal(back.body.status, 1)
  })

  it('validates the address, status, tags and custom fields with 422 and field paths', async () => {
    const missing = await subscribe({ subscriber_data: { name: 'x' } })
    assert.equal(missing.status, 422)
    assert.deepEqual(missing.body, {
      errors: { 'subscriber_data.email': ['The email field is required.'] },
    })
    const invalid = await subscribe({ subscriber_data: { email: 'not an address' } })
    assert.deepEqual(invalid.body, {
      errors: { 'subscriber_data.email': ['The email must be a valid email address.'] },
    })
    // Dots a relay refuses (501) are refused here rather than sent and counted as hard bounces.
    for (const email of ['.dot.@example.cz', 'a..b@example.cz']) {
      const dots = await subscribe({ subscriber_data: { email } })
      assert.equal(dots.status, 422, email)
      assert.deepEqual(dots.body.errors, {
        'subscriber_data.email': ['The email must be a valid email address.'],
      })
    }
    const many = await subscribe({
      subscriber_data: {
        email: 'ok@example.cz',
        status: 4,
        tags: ['x'.repeat(51)],
        custom_fields: ['a'],
      },
    })
    assert.equal(many.status, 422)
    assert.deepEqual(Object.keys(many.body.errors).sort(), [
      'subscriber_data.custom_fields',
      'subscriber_data.status',
      'subscriber_data.tags',
    ])
    const dup = await subscribe({
      subscriber_data: { email: 'ok@example.cz', custom_fields: { A: 1, ' a': 2 } },
    })
    assert.equal(dup.status, 422)
    assert.ok(dup.body.errors['subscriber_data.custom_fields'])
    const types = await subscribe({ subscriber_data: { email: 'ok@example.cz', name: { first: 'x' } } })
    assert.equal(types.status, 422)
    assert.ok(types.body.errors['subscriber_data.name'])
    const none = await subscribe({})
    assert.deepEqual(none.body, { errors: { subscriber_data: ['The subscriber_data field is required.'] } })
    assert.equal(await contactOf(t, 'ok@example.cz'), undefined)
  })

  it('accepts an empty JSON array as empty custom fields and groups (PHP encodes an empty map so)', async () => {
    const res = await subscribe({
      subscriber_data: { email: 'php@example.cz', custom_fields: [], groups: [] },
    })
    assert.equal(res.status, 200, res.text)
    const c = await contactOf(t, 'php@example.cz')
    assert.deepEqual(c?.customFields, {})
    assert.deepEqual(c?.groups, {})
    const update = await t.req('PUT', `/lists/${listId}/update-subscriber`, {
      body: { email: 'php@example.cz', subscriber_data: { name: 'Php', groups: [], custom_fields: [] } },
    })
    assert.equal(update.status, 200, update.text)
    assert.deepEqual(update.body.groups, {})
    const bulk = await t.req('POST', `/lists/${listId}/subscribe-bulk`, {
      body: { subscriber_data: [{ email: 'php2@example.cz', groups: [], custom_fields: [] }] },
    })
    assert.deepEqual([bulk.status, bulk.body], [200, { inserts: 1 }])
    const bulkUpdate = await t.req('PUT', `/lists/${listId}/update-subscribers-bulk`, {
      body: { subscriber_data: [{ email: 'php2@example.cz', groups: [], custom_fields: [] }] },
    })
    assert.deepEqual([bulkUpdate.status, bulkUpdate.body], [200, { updates: 1 }])
    // Only an empty array stands for a map.
    const bad = await subscribe({ subscriber_data: { email: 'php3@example.cz', groups: ['a'] } })
    assert.equal(bad.status, 422)
    assert.deepEqual(Object.keys(bad.body.errors), ['subscriber_data.groups'])
  })

  it('reads custom fields given as JSON text, as tag-manager clients send a text setting', async () => {
    const res = await subscribe({
      subscriber_data: {
        email: 'gtm@example.cz',
        // Read as a request body is: `__proto__` dropped.
        custom_fields: '{"Lang":"cs","points":{"value":5,"type":"int"},"__proto__":{"polluted":true}}',
      },
    })
    assert.equal(res.status, 200, res.text)
    const blank = await subscribe({
      subscriber_data: { email: 'gtm@example.cz', name: 'Eva', custom_fields: '' },
      update_existing: true,
    })
    assert.equal(blank.status, 200, blank.text)
    const read = await t.req('GET', `/lists/${listId}/subscriber/gtm@example.cz`)
    assert.equal(read.body.subscriber.name, 'Eva')
    assert.deepEqual(read.body.subscriber.custom_fields, { lang: 'cs', points: { value: 5, type: 'int' } })
    for (const text of ['not json', '"text"', '[1]', '{"a":"\\u0000"}']) {
      const bad = await subscribe({ subscriber_data: { email: 'gtm2@example.cz', custom_fields: text } })
      assert.equal(bad.status, 422, text)
      assert.deepEqual(Object.keys(bad.body.errors), ['subscriber_data.custom_fields'], text)
    }
  })

  it('refuses a rating its float column cannot hold, on every write that takes one (was a 500)', async () => {
    const email = 'rating.range@example.cz'
    const fresh = 'rating.fresh@example.cz'
    assert.equal((await subscribe({ subscriber_data: { email, rating: 2 } })).status, 200)
    const errorKeys = (res: { body: { errors?: object } }) => Object.keys(res.body.errors ?? {})
    for (const rating of [1e39, -1e39, 1e-50, '1e308']) {
      const one = await subscribe({ subscriber_data: { email: fresh, rating } })
      assert.deepEqual([one.status, errorKeys(one)], [422, ['subscriber_data.rating']], `${rating}`)
      const bulk = await t.req('POST', `/lists/${listId}/subscribe-bulk`, {
        body: { subscriber_data: [{ email: fresh, rating }] },
      })
      assert.deepEqual([bulk.status, errorKeys(bulk)], [422, ['subscriber_data.0.rating']], `${rating}`)
      const update = await t.req('PUT', `/lists/${listId}/update-subscriber`, {
        body: { email, subscriber_data: { rating } },
      })
      assert.deepEqual([update.status, errorKeys(update)], [422, ['subscriber_data.rating']], `${rating}`)
      const bulkUpdate = await t.req('PUT', `/lists/${listId}/update-subscribers-bulk`, {
        body: { subscriber_data: [{ email, rating }] },
      })
      assert.deepEqual(
        [bulkUpdate.status, errorKeys(bulkUpdate)],
        [400, ['subscriber_data.0.rating']],
        `${rating}`,
      )
    }
    assert.equal(await contactOf(t, fresh), undefined)
    assert.equal((await contactOf(t, email))?.rating, 2)
    // What it can hold is kept.
    const kept = await subscribe({ subscriber_data: { email: fresh, rating: 2.5e-3 } })
    assert.equal(kept.status, 200, kept.text)
    assert.equal((await contactOf(t, fresh))?.rating, 0.0025)
  })

  it('reads null as "not given" for status, rating, tags and groups, as the bulk endpoints do', async () => {
    const email = 'nulls@example.cz'
    const first = await subscribe({
      subscriber_data: { email, status: null, rating: null, tags: null, groups: null, custom_fields: null },
    })
    assert.equal(first.status, 200, first.text)
    assert.equal(first.body.status, 1)
    await subscribe({
      subscriber_data: { email, rating: 3, tags: ['vip'], groups: { g: ['a'] } },
      update_existing: true,
    })
    const update = await t.req('PUT', `/lists/${listId}/update-subscriber`, {
      body: { email, subscriber_data: { name: 'N', status: null, rating: null, tags: null, groups: null } },
    })
    assert.equal(update.status, 200, update.text)
    assert.deepEqual(
      [update.body.name, update.body.status, update.body.rating, update.body.tags, update.body.groups],
      ['N', 1, 3, ['vip'], { g: ['a'] }],
    )
    const zero = await t.req('PUT', `/lists/${listId}/update-subscriber`, {
      body: { email, subscriber_data: { rating: 0 } },
    })
    assert.equal(zero.body.rating, 0)
    const badStatus = await subscribe({ subscriber_data: { email, status: 0 } })
    assert.deepEqual(badStatus.body, {
      errors: { 'subscriber_data.status': ['The selected status is invalid.'] },
    })
    // By its list-page name too (a C# client's "subscribed"), on subscribe and update-subscriber alike.
    const named = 'named.status@example.cz'
    assert.equal((await subscribe({ subscriber_data: { email: named, status: 'subscribed' } })).status, 200)
    assert.equal((await memberOf(t, listId, named))?.status, 1)
    const out = await t.req('PUT', `/lists/${listId}/update-subscriber`, {
      body: { email: named, subscriber_data: { status: 'Unsubscribed' } },
    })
    assert.deepEqual([out.status, (await memberOf(t, listId, named))?.status], [200, 2])
    const unknown = await subscribe({ subscriber_data: { email, status: 'gone' } })
    assert.deepEqual(Object.keys(unknown.body.errors), ['subscriber_data.status'])
  })

  it('two simultaneous subscribes of one new address both succeed on one contact', async () => {
    const email = 'race@example.cz'
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) => subscribe({ subscriber_data: { email, name: `R${i}` } })),
    )
    assert.deepEqual(
      results.map((r) => r.status),
      [200, 200, 200, 200],
    )
    assert.equal(new Set(results.map((r) => r.body.id)).size, 1)
    assert.equal(results.filter((r) => r.body.already_subscribed === false).length, 1)
    const m = await memberOf(t, listId, email)
    assert.equal(m?.status, 1)
  })

  it("answers 404 {message} for another account's list, as for a missing one", async () => {
    const body = { subscriber_data: { email: 'tenant@example.cz' } }
    const theirs = await subscribe(body, listId, other.key)
    const missing = await subscribe(body, 999999)
    assert.equal(theirs.status, 404)
    assert.deepEqual(theirs.body, missing.body)
    assert.equal(typeof theirs.body.message, 'string')
    assert.equal(await contactOf(t, 'tenant@example.cz', other.id), undefined)
    const before = await countMembers(t, listId)
    assert.equal(await countMembers(t, listId), before)
  })

  it('needs a key', async () => {
    const res = await t.req('POST', `/lists/${listId}/subscribe`, {
      key: null,
      body: { subscriber_data: { email: 'nokey@example.cz' } },
    })
    assert.equal(res.status, 401)
    assert.deepEqual(res.body, { message: 'Unauthorized' })
  })

  it('takes tags as PHP writes a list with gaps in its keys (an object), on every write', async () => {
    const list = (await t.req('POST', '/lists', { body: { name: 'Gaps' } })).body.id as number
    const gaps = { '0': 'a', '2': 'b' }
    const one = await t.req('POST', `/lists/${list}/subscribe`, {
      body: { subscriber_data: { email: 'gaps1@x.cz', tags: gaps } },
    })
    assert.equal(one.status, 200, one.text)
    const bulk = await t.req('POST', `/lists/${list}/subscribe-bulk`, {
      body: { subscriber_data: [{ email: 'gaps2@x.cz', tags: gaps }] },
    })
    assert.equal(bulk.status, 200, bulk.text)
    const update = await t.req('PUT', `/lists/${list}/update-subscriber`, {
      body: { email: 'gaps2@x.cz', subscriber_data: { tags: { '1': 'c', '5': 'd' } } },
    })
    assert.equal(update.status, 200, update.text)
    const tags = async (email: string) =>
      (await t.req('GET', `/lists/${list}/subscriber/${email}`)).body.subscriber.tags as string[]
    assert.deepEqual(
      [await tags('gaps1@x.cz'), await tags('gaps2@x.cz')],
      [
        ['a', 'b'],
        ['c', 'd'],
      ],
    )
  })

  it('takes tags and groups given beside subscriber_data when it has none of its own', async () => {
    const outer = await subscribe({
      subscriber_data: { email: 'outer@x.cz' },
      tags: ['vip', 'notion'],
      groups: { grp_1: ['A', 'B'] },
    })
    assert.equal(outer.status, 200, outer.text)
    const read = async (email: string) => (await t.req('GET', `/lists/${listId}/subscriber/${email}`)).body
    const first = await read('outer@x.cz')
    assert.deepEqual(
      [first.subscriber.tags, first.subscriber.groups],
      [['vip', 'notion'], { grp_1: ['A', 'B'] }],
    )
    // subscriber_data's own win.
    await subscribe({
      subscriber_data: { email: 'inner@x.cz', tags: ['inner'], groups: { grp_1: ['C'] } },
      tags: ['outer'],
      groups: { grp_1: ['D'] },
    })
    const second = await read('inner@x.cz')
    assert.deepEqual([second.subscriber.tags, second.subscriber.groups], [['inner'], { grp_1: ['C'] }])
    const bad = await subscribe({ subscriber_data: { email: 'bad-outer@x.cz' }, groups: 'A' })
    assert.equal(bad.status, 422)
  })

  it('takes switches as "1" and "0" too, as PHP forms and settings hold them', async () => {
    const list = (await t.req('POST', '/lists', { body: { name: 'Flags' } })).body.id as number
    const sub = (body: Record<string, unknown>) => t.req('POST', `/lists/${list}/subscribe`, { body })
    assert.equal((await sub({ subscriber_data: { email: 'flag@x.cz', name: 'One' } })).status, 200)
    await t.req('DELETE', `/lists/${list}/unsubscribe`, { body: { email: 'flag@x.cz' } })
    const again = await sub({
      subscriber_data: { email: 'flag@x.cz', name: 'Two' },
      update_existing: '1',
      resubscribe: '1',
    })
    assert.equal(again.status, 200, again.text)
    const kept = await t.req('POST', `/lists/${list}/subscribe-bulk`, {
      body: { subscriber_data: [{ email: 'flag@x.cz', name: 'Three' }], update_existing: '0' },
    })
    assert.equal(kept.status, 200, kept.text)
    const s = (await t.req('GET', `/lists/${list}/subscriber/flag@x.cz`)).body.subscriber
    assert.deepEqual([s.name, s.status], ['Two', 1])
    assert.equal((await sub({ subscriber_data: { email: 'flag@x.cz' }, resubscribe: 'yes' })).status, 422)
  })
})
