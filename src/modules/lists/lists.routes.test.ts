import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { eq } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { lists } from './lists.table.js'

const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/

describe('lists', async () => {
  const t = await startTestApp()
  const other = await t.createAccount()

  it('creates a list with its settings and returns id and name', async () => {
    const res = await t.req('POST', '/lists', {
      body: {
        name: 'Newsletter',
        from_name: 'Shop',
        from_email: 'news@shop.cz',
        double_optin: true,
        conf_subject: 'Confirm',
      },
    })
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.equal(typeof res.body.id, 'number')
    assert.equal(res.body.name, 'Newsletter')
    assert.equal(res.body.double_optin, true)
    assert.match(res.body.created_at, DATE_TIME)
  })

  it('takes custom_fields [] as an empty map (PHP encodes an empty array so)', async () => {
    const res = await t.req('POST', '/lists', { body: { name: 'From PHP', custom_fields: [] } })
    assert.equal(res.status, 200, res.text)
    const shown = await t.req('GET', `/lists/${res.body.id}`)
    assert.deepEqual(shown.body.list.custom_fields, {})
    const put = await t.req('PUT', `/lists/${res.body.id}`, { body: { custom_fields: [] } })
    assert.equal(put.status, 200, put.text)
    const bad = await t.req('POST', '/lists', { body: { name: 'x', custom_fields: ['a'] } })
    assert.equal(bad.status, 422)
    assert.deepEqual(Object.keys(bad.body.errors), ['custom_fields'])
  })

  it("takes double_optin '1' and '0' (PHP clients send a setting's string)", async () => {
    const res = await t.req('POST', '/lists', { body: { name: 'Setting', double_optin: '1' } })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.double_optin, true)
    const put = await t.req('PUT', `/lists/${res.body.id}`, { body: { double_optin: '0' } })
    assert.equal(put.status, 200, put.text)
    assert.equal((await t.req('GET', `/lists/${res.body.id}`)).body.list.double_optin, false)
    const bad = await t.req('POST', '/lists', { body: { name: 'x', double_optin: 'maybe' } })
    assert.deepEqual(Object.keys(bad.body.errors), ['double_optin'])
  })

  it('requires a name and validates addresses', async () => {
    const res = await t.req('POST', '/lists', { body: { from_email: 'not-an-address' } })
    assert.equal(res.status, 422)
    assert.deepEqual(Object.keys(res.body.errors).sort(), ['from_email', 'name'])
    assert.deepEqual(res.body.errors.name, ['The name field is required.'])
  })

  it('takes pages that are absolute http(s) URLs or blank, and refuses others on create and update', async () => {
    const pages = {
      sub_success_page: 'https://shop.cz/thanks',
      sub_confirmed_page: 'HTTP://shop.cz/ok?email=*|EMAIL|*',
      unsub_page: '',
    }
    const ok = await t.req('POST', '/lists', { body: { name: 'Pages', ...pages } })
    assert.equal(ok.status, 200, ok.text)
    assert.equal(ok.body.sub_confirmed_page, pages.sub_confirmed_page)
    const bad = await t.req('POST', '/lists', {
      body: { name: 'Bad pages', sub_success_page: 'not a url', unsub_page: 'javascript:alert(1)' },
    })
    assert.equal(bad.status, 422)
    assert.deepEqual(bad.body.errors, {
      sub_success_page: ['The sub_success_page format is invalid.'],
      unsub_page: ['The unsub_page format is invalid.'],
    })
    const put = await t.req('PUT', `/lists/${ok.body.id}`, { body: { sub_confirmed_page: '/relative' } })
    assert.deepEqual(Object.keys(put.body.errors), ['sub_confirmed_page'])
    const kept = await t.req('GET', `/lists/${ok.body.id}`)
    assert.equal(kept.body.list.sub_confirmed_page, pages.sub_confirmed_page)
  })

  it('takes back, unchanged, a page stored before pages were checked, when the list is PUT as GET shows it', async () => {
    const { id } = (await t.req('POST', '/lists', { body: { name: 'Old pages' } })).body
    // As an earlier version stored it, before the check.
    await t.ctx.db.update(lists).set({ unsubPage: 'thanks.html' }).where(eq(lists.id, id))
    const { list } = (await t.req('GET', `/lists/${id}`)).body
    const whole = await t.req('PUT', `/lists/${id}`, { body: { ...list, name: 'Renamed' } })
    assert.equal(whole.status, 200, whole.text)
    assert.deepEqual([whole.body.name, whole.body.unsub_page], ['Renamed', 'thanks.html'])
    const changed = await t.req('PUT', `/lists/${id}`, { body: { unsub_page: 'other.html' } })
    assert.deepEqual(Object.keys(changed.body.errors ?? {}), ['unsub_page'])
  })

  it('lists, shows with counts, updates and deletes', async () => {
    const { id } = (await t.req('POST', '/lists', { body: { name: 'A' } })).body
    const all = await t.req('GET', '/lists')
    assert.ok(Array.isArray(all.body))
    const item = all.body.find((l: { id: number }) => l.id === id)
    for (const f of [
      'id',
      'name',
      'from_name',
      'from_email',
      'reply_to',
      'sub_success_page',
      'sub_confirmed_page',
      'unsub_page',
      'double_optin',
      'conf_subject',
      'conf_message',
      'created_at',
    ]) {
      assert.ok(f in item, `list object has ${f}`)
    }
    const detail = await t.req('GET', `/lists/${id}`)
    assert.equal(detail.status, 200)
    assert.equal(detail.body.list.id, String(id))
    assert.deepEqual(detail.body.list.segments, [])
    assert.equal(detail.body.list.active_subscribers, 0)
    assert.deepEqual(detail.body.subscribers, {
      subscribed: 0,
      unsubscribed: 0,
      soft_bounced: 0,
      hard_bounced: 0,
      complained: 0,
      unconfirmed: 0,
    })
    const put = await t.req('PUT', `/lists/${id}`, { body: { name: 'B', reply_to: 'r@shop.cz' } })
    assert.equal(put.status, 200)
    assert.equal(put.body.id, id)
    assert.equal(put.body.name, 'B')
    assert.equal(put.body.reply_to, 'r@shop.cz')
    const del = await t.req('DELETE', `/lists/${id}`)
    assert.deepEqual(del.body, { deleted: true })
    assert.equal((await t.req('GET', `/lists/${id}`)).status, 404)
  })

  it("answers 404 for another account's list, exactly as for a missing one", async () => {
    const { id } = (await t.req('POST', '/lists', { body: { name: 'Mine' } })).body
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const theirs = await t.req(method, `/lists/${id}`, { key: other.key, body })
      const missing = await t.req(method, `/lists/999999`, { body })
      assert.equal(theirs.status, 404)
      assert.deepEqual(theirs.body, missing.body)
    }
    const theirList = await t.req('GET', '/lists', { key: other.key })
    assert.equal(
      theirList.body.some((l: { id: number }) => l.id === id),
      false,
    )
  })

  it('needs a key', async () => {
    assert.deepEqual((await t.req('GET', '/lists', { key: null })).body, { message: 'Unauthorized' })
    assert.equal((await t.req('GET', '/lists', { key: 'wrong' })).status, 401)
  })

  it('answers 404 for a path id that is no id (non-numeric, zero, past the integer range)', async () => {
    for (const id of ['abc', '0', '99999999999']) {
      const res = await t.req('GET', `/lists/${id}`)
      assert.equal(res.status, 404, id)
      assert.deepEqual(res.body, { message: 'Not Found' })
    }
  })
})
