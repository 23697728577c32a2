import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { contactOf, createList } from './subscribers.write.test-helpers.js'

/** birthday and nameday are checked on every subscriber write (issue 10 item 6). */
describe('birthday and nameday on every subscriber write', async () => {
  const t = await startTestApp({ worker: false })
  const listId = await createList(t)
  const subscribe = (subscriber_data: Record<string, unknown>) =>
    t.req('POST', `/lists/${listId}/subscribe`, { body: { subscriber_data } })
  const bulk = (subscriber_data: Record<string, unknown>[]) =>
    t.req('POST', `/lists/${listId}/subscribe-bulk`, { body: { subscriber_data } })
  const update = (email: string, subscriber_data: Record<string, unknown>) =>
    t.req('PUT', `/lists/${listId}/update-subscriber`, { body: { email, subscriber_data } })
  const updateBulk = (subscriber_data: Record<string, unknown>[]) =>
    t.req('PUT', `/lists/${listId}/update-subscribers-bulk`, { body: { subscriber_data } })

  const BAD_BIRTHDAYS = ['2026-02-30', '2026-13-01', '2026-00-10', '2025-02-29', 'soon', '01-05', '1990-5-1']
  const BAD_NAMEDAYS = ['02-30', '13-01', '00-01', '2026-02-30', 'May 1', '5-1']

  it('subscribe stores real dates, year-less namedays (02-29 too) and rejects the rest with 422', async () => {
    const ok = await subscribe({ email: 'ok@example.cz', birthday: '2024-02-29', nameday: '02-29' })
    assert.equal(ok.status, 200, ok.text)
    const c = await contactOf(t, 'ok@example.cz')
    assert.equal(c?.birthday, '2024-02-29')
    assert.equal(c?.nameday, '02-29')
    const full = await subscribe({ email: 'full@example.cz', nameday: '1990-12-24' })
    assert.equal(full.status, 200, full.text)
    assert.equal((await contactOf(t, 'full@example.cz'))?.nameday, '1990-12-24')

    for (const birthday of BAD_BIRTHDAYS) {
      const res = await subscribe({ email: 'bad@example.cz', birthday })
      assert.equal(res.status, 422, birthday)
      assert.deepEqual(Object.keys(res.body.errors), ['subscriber_data.birthday'], birthday)
      assert.match(res.body.errors['subscriber_data.birthday'][0], /birthday.*YYYY-MM-DD/)
    }
    for (const nameday of BAD_NAMEDAYS) {
      const res = await subscribe({ email: 'bad@example.cz', nameday })
      assert.equal(res.status, 422, nameday)
      assert.deepEqual(Object.keys(res.body.errors), ['subscriber_data.nameday'], nameday)
    }
    assert.equal(await contactOf(t, 'bad@example.cz'), undefined, 'nothing stored for a rejected request')
  })

  it('reads the dates shops send: a date-time, MySQL zero date (none), .NET short dates', async () => {
    const forms: [string, string][] = [
      ['1990-01-15 00:00:00', '1990-01-15'],
      ['1990-01-15T00:00:00+01:00', '1990-01-15'],
      ['15.01.1990', '1990-01-15'],
      ['5. 1. 1990', '1990-01-05'],
      ['15-1-1990', '1990-01-15'],
      ['1/15/1990', '1990-01-15'],
      ['01/05/1990', '1990-01-05'],
      ['0000-00-00', ''],
    ]
    for (const [birthday, stored] of forms) {
      const res = await t.req('POST', `/lists/${listId}/subscribe`, {
        body: { subscriber_data: { email: 'shop@example.cz', birthday }, update_existing: true },
      })
      assert.equal(res.status, 200, `${birthday}: ${res.text}`)
      const read = await t.req('GET', `/lists/${listId}/subscriber/shop@example.cz`)
      assert.equal(read.body.subscriber.birthday ?? '', stored, birthday)
      await update('shop@example.cz', { birthday: '2000-02-02' })
    }
    // Not a day, month-first with slashes as PHP reads them, or dots read day first.
    for (const birthday of ['15/01/1990', '32.01.1990', '1990-01-15 25:00']) {
      const res = await bulk([{ email: 'shop2@example.cz', birthday }])
      assert.equal(res.status, 422, birthday)
    }
  })

  it('subscribe-bulk names the entry and the field, and stores nothing of the batch', async () => {
    const res = await bulk([
      { email: 'b1@example.cz', birthday: '1990-05-01' },
      { email: 'b2@example.cz', birthday: '2026-02-30' },
      { email: 'b3@example.cz', nameday: '13-01' },
    ])
    assert.equal(res.status, 422)
    assert.deepEqual(res.body.errors, {
      'subscriber_data.1.birthday': ['The birthday must be a real date in the format YYYY-MM-DD.'],
      'subscriber_data.2.nameday': ['The nameday must be a real date in the format MM-DD or YYYY-MM-DD.'],
    })
    assert.equal(await contactOf(t, 'b1@example.cz'), undefined)

    const good = await bulk([{ email: 'b1@example.cz', birthday: '1990-05-01', nameday: '05-01' }])
    assert.equal(good.status, 200, good.text)
    assert.equal((await contactOf(t, 'b1@example.cz'))?.birthday, '1990-05-01')
  })

  it('update-subscriber rejects a bad date with 422; empty string and null are no dates to check', async () => {
    const made = await subscribe({ email: 'u@example.cz', birthday: '1980-01-31', nameday: '01-31' })
    assert.equal(made.status, 200)
    const bad = await update('u@example.cz', { birthday: '1980-02-31' })
    assert.equal(bad.status, 422)
    assert.deepEqual(Object.keys(bad.body.errors), ['subscriber_data.birthday'])
    assert.equal((await contactOf(t, 'u@example.cz'))?.birthday, '1980-01-31', 'unchanged after a 422')

    // Both clear the field here, as they do for every other text field of this endpoint.
    const cleared = await update('u@example.cz', { birthday: '', nameday: null })
    assert.equal(cleared.status, 200, cleared.text)
    const c = await contactOf(t, 'u@example.cz')
    assert.equal(c?.birthday, '')
    assert.equal(c?.nameday, '')
  })

  it('update-subscribers-bulk answers 400 with subscriber_data.<index>.<field> and changes nothing', async () => {
    assert.equal((await subscribe({ email: 'v@example.cz', birthday: '1970-07-07' })).status, 200)
    const res = await updateBulk([
      { email: 'v@example.cz', birthday: '1970-07-08' },
      { email: 'v@example.cz', nameday: '02-30' },
      { email: 'w@example.cz', birthday: 'yesterday' },
    ])
    assert.equal(res.status, 400)
    assert.deepEqual(Object.keys(res.body.errors).sort(), [
      'subscriber_data.1.nameday',
      'subscriber_data.2.birthday',
    ])
    assert.equal((await contactOf(t, 'v@example.cz'))?.birthday, '1970-07-07')

    const ok = await updateBulk([{ email: 'v@example.cz', birthday: '1970-07-08', nameday: '12-31' }])
    assert.equal(ok.status, 200, ok.text)
    const v = await contactOf(t, 'v@example.cz')
    assert.equal(v?.birthday, '1970-07-08')
    assert.equal(v?.nameday, '12-31')
  })
})
