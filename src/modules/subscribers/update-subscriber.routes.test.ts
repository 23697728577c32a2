import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { contactOf, createList, ISO_MICRO, memberOf } from './subscribers.write.test-helpers.js'

const NOW = new Date('2026-01-02T03:04:05.678Z')

describe('PUT /lists/{id}/update-subscriber and DELETE /lists/{id}/unsubscribe', async () => {
  const clock = new ManualClock(NOW)
  const t = await startTestApp({ clock })
  const other = await t.createAccount()
  const listId = await createList(t)
  const subscribe = async (subscriber_data: Record<string, unknown>, id = listId) => {
    const res = await t.req('POST', `/lists/${id}/subscribe`, { body: { subscriber_data } })
    assert.equal(res.status, 200, res.text)
    return res.body
  }
  const update = (body: unknown, id = listId, key?: string) =>
    t.req('PUT', `/lists/${id}/update-subscriber`, { body, ...(key ? { key } : {}) })
  const unsubscribe = (body: unknown, id = listId, key?: string) =>
    t.req('DELETE', `/lists/${id}/unsubscribe`, { body, ...(key ? { key } : {}) })

  it('updates the given fields and answers with the subscriber in the list', async () => {
    const { id } = await subscribe({
      email: 'eva+shop@example.cz',
      name: 'Eva',
      surname: 'Old',
      city: 'Brno',
      tags: ['a'],
      source: 'form',
      custom_fields: { keep: 1 },
    })
    const res = await update({
      email: 'Eva+Shop@example.cz',
      subscriber_data: {
        surname: 'New',
        company: 'Firma',
        tags: ['b'],
        custom_fields: { Size: 'M' },
        groups: { g: ['x'] },
      },
    })
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.deepEqual(res.body, {
      id,
      name: 'Eva',
      surname: 'New',
      email: 'eva+shop@example.cz',
      company: 'Firma',
      city: 'Brno',
      street: '',
      zip: '',
      country: '',
      phone: '',
      gender: '',
      pretitle: '',
      surtitle: '',
      birthday: null,
      nameday: null,
      vokativ: '',
      vokativ_s: '',
      tags: ['b'],
      rating: 0,
      inserted_at: res.body.inserted_at,
      list_id: listId,
      status: 1,
      source: 'form',
      subscribed_at: '2026-01-02T03:04:05.678000Z',
      unsubscribed_at: null,
      custom_fields: { keep: 1, size: 'M' },
      groups: { g: ['x'] },
      bounce_soft: 0,
      bounced_hard: 0,
      bounce_message: null,
    })
  })

  it('moves the person to a new address unless another contact holds it', async () => {
    await subscribe({ email: 'move@example.cz' })
    await subscribe({ email: 'taken@example.cz' }, await createList(t))
    const taken = await update({ email: 'move@example.cz', subscriber_data: { email: 'TAKEN@example.cz' } })
    assert.equal(taken.status, 422)
    assert.deepEqual(taken.body, {
      errors: { 'subscriber_data.email': ['The email has already been taken.'] },
    })
    const moved = await update({ email: 'move@example.cz', subscriber_data: { email: 'Moved@example.cz' } })
    assert.equal(moved.status, 200)
    assert.equal(moved.body.email, 'moved@example.cz')
    assert.equal(await contactOf(t, 'move@example.cz'), undefined)
  })

  it('applies the bulk update status rules', async () => {
    await subscribe({ email: 'st@example.cz' })
    clock.advance(1000)
    const two = await update({ email: 'st@example.cz', subscriber_data: { status: 2 } })
    assert.equal(two.body.status, 2)
    assert.equal(two.body.unsubscribed_at, '2026-01-02T03:04:06.678000Z')
    const ignored = await update({ email: 'st@example.cz', subscriber_data: { status: 1, name: 'Still' } })
    assert.equal(ignored.body.status, 2)
    assert.equal(ignored.body.name, 'Still')
    const back = await update({
      email: 'st@example.cz',
      subscriber_data: { status: 1 },
      allow_resubscribe: true,
    })
    assert.equal(back.body.status, 1)
    assert.equal(back.body.unsubscribed_at, null)
    const four = await update({ email: 'st@example.cz', subscriber_data: { status: 4 } })
    assert.equal(four.body.status, 4)
    assert.equal(four.body.bounced_hard, 1)
    assert.equal((await contactOf(t, 'st@example.cz'))?.suppressed, 'hard_bounce')
    const six = await update({ email: 'st@example.cz', subscriber_data: { status: 6 } })
    assert.equal(six.status, 422)
    assert.deepEqual(six.body, { errors: { 'subscriber_data.status': ['The selected status is invalid.'] } })
  })

  it('validates with 422 and field paths', async () => {
    await subscribe({ email: 'val@example.cz' })
    const res = await update({
      email: 'val@example.cz',
      subscriber_data: { email: 'broken', custom_fields: 'x', tags: ['y'.repeat(51)] },
    })
    assert.equal(res.status, 422)
    assert.deepEqual(Object.keys(res.body.errors).sort(), [
      'subscriber_data.custom_fields',
      'subscriber_data.email',
      'subscriber_data.tags',
    ])
    const noEmail = await update({ subscriber_data: { name: 'x' } })
    assert.deepEqual(noEmail.body, { errors: { email: ['The email field is required.'] } })
  })

  it('answers 404 {errors:[...]} for an address not in the list, 404 {message} for the list', async () => {
    await subscribe({ email: 'elsewhere@example.cz' }, await createList(t))
    for (const email of ['elsewhere@example.cz', 'nobody@example.cz']) {
      const res = await update({ email, subscriber_data: { name: 'x' } })
      assert.equal(res.status, 404)
      assert.ok(Array.isArray(res.body.errors) && typeof res.body.errors[0] === 'string')
      const unsub = await unsubscribe({ email })
      assert.equal(unsub.status, 404)
      assert.ok(Array.isArray(unsub.body.errors))
    }
    await subscribe({ email: 'mine@example.cz' })
    const theirs = await update(
      { email: 'mine@example.cz', subscriber_data: { name: 'x' } },
      listId,
      other.key,
    )
    assert.equal(theirs.status, 404)
    assert.deepEqual(theirs.body, (await update({ email: 'mine@example.cz' }, 999999)).body)
    assert.equal(typeof theirs.body.message, 'string')
    const theirUnsub = await unsubscribe({ email: 'mine@example.cz' }, listId, other.key)
    assert.equal(theirUnsub.status, 404)
    assert.equal(typeof theirUnsub.body.message, 'string')
    assert.equal((await memberOf(t, listId, 'mine@example.cz'))?.status, 1)
  })

  it('unsubscribes with status 2 and the time, and a repeat keeps the first time', async () => {
    clock.set(NOW)
    const { id } = await subscribe({ email: 'bye+list@example.cz', custom_fields: { a: 1 }, source: 'web' })
    clock.advance(5000)
    const res = await unsubscribe({ email: 'Bye+List@example.cz' })
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    const membership = await memberOf(t, listId, 'bye+list@example.cz')
    assert.deepEqual(res.body, {
      id: membership?.id,
      list_id: listId,
      email: 'bye+list@example.cz',
      status: 2,
      subscribed_at: '2026-01-02T03:04:05.678000Z',
      unsubscribed_at: '2026-01-02T03:04:10.678000Z',
      custom_fields: { a: 1 },
      source: 'web',
    })
    assert.notEqual(id, undefined)
    clock.advance(5000)
    const again = await unsubscribe({ email: 'bye+list@example.cz' })
    assert.equal(again.status, 200)
    assert.deepEqual(again.body, res.body)
    assert.match(again.body.subscribed_at, ISO_MICRO)
  })

  it('needs an email to unsubscribe, and a key', async () => {
    const res = await unsubscribe({})
    assert.equal(res.status, 422)
    assert.deepEqual(res.body, { errors: { email: ['The email field is required.'] } })
    const invalid = await unsubscribe({ email: 'nope' })
    assert.deepEqual(invalid.body, { errors: { email: ['The email must be a valid email address.'] } })
    const nokey = await t.req('DELETE', `/lists/${listId}/unsubscribe`, {
      key: null,
      body: { email: 'a@b.cz' },
    })
    assert.equal(nokey.status, 401)
    const nokeyUpdate = await t.req('PUT', `/lists/${listId}/update-subscriber`, {
      key: null,
      body: { email: 'a@b.cz' },
    })
    assert.equal(nokeyUpdate.status, 401)
  })

  it('names the subscriber by subscriber_data.email when the body has no email of its own', async () => {
    // Tag-manager clients send the contact as for subscribe: the address inside subscriber_data only.
    await subscribe({ email: 'gtm@example.cz', name: 'Old', tags: ['a'] })
    const res = await update({
      subscriber_data: { email: 'GTM@example.cz', name: 'New', tags: ['wpj'] },
      trigger_autoresponders: false,
      update_existing: true,
      resubscribe: false,
      skip_confirmation: false,
    })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.email, 'gtm@example.cz')
    const read = await t.req('GET', `/lists/${listId}/subscriber/gtm@example.cz`)
    assert.equal(read.body.subscriber.name, 'New')
    assert.deepEqual(read.body.subscriber.tags, ['wpj'])
    const bad = await update({ subscriber_data: { email: 'broken' } })
    assert.deepEqual(bad.body, {
      errors: { 'subscriber_data.email': ['The email must be a valid email address.'] },
    })
    const absent = await update({ subscriber_data: { email: 'nobody@example.cz' } })
    assert.equal(absent.status, 404)
  })

  it("takes `[]` for subscriber_data (PHP's empty map): nothing changes", async () => {
    await subscribe({ email: 'empty@example.cz', name: 'Kept' })
    const res = await update({ email: 'empty@example.cz', subscriber_data: [] })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.name, 'Kept')
  })
})
