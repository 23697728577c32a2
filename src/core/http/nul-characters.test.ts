import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'

/** U+0000, which PostgreSQL's text and jsonb cannot hold, is refused in the contract's shapes, not with a 500. */
describe('NUL characters in input', async () => {
  const t = await startTestApp()
  const list = (await t.req('POST', '/lists', { body: { name: 'L' } })).body.id as number
  const folderNames = async () =>
    ((await t.req('GET', '/coupons/folders')).body as { name: string }[]).map((f) => f.name)

  it('in a body field: 422 naming the field, and nothing written', async () => {
    const res = await t.req('POST', '/coupons/folders', { body: { name: 'a\u0000b' } })
    assert.equal(res.status, 422, res.text)
    assert.deepEqual(res.body, { errors: { name: ['The name must not contain a NUL character.'] } })
    assert.ok(!(await folderNames()).some((n) => n.startsWith('a')))
  })

  it('deep in a body, in a value or a key: 422 naming where', async () => {
    const inValue = await t.req('POST', `/lists/${list}/subscribe`, {
      body: { subscriber_data: { email: 'n@x.cz', tags: ['ok', 't\u0000'] } },
    })
    assert.equal(inValue.status, 422, inValue.text)
    assert.deepEqual(Object.keys(inValue.body.errors), ['subscriber_data.tags.1'])
    const inKey = await t.req('POST', `/lists/${list}/subscribe`, {
      body: { subscriber_data: { email: 'n@x.cz', custom_fields: { 'k\u0000': 'v' } } },
    })
    assert.equal(inKey.status, 422, inKey.text)
    assert.deepEqual(Object.keys(inKey.body.errors), ['subscriber_data.custom_fields'])
    assert.equal((await t.req('GET', `/lists/${list}/subscriber/n@x.cz`)).status, 404)
  })

  it('deep in a body: the error names the first sixteen steps of the way to it', async () => {
    const props = `${'['.repeat(60)}"a\\u0000"${']'.repeat(60)}`
    const res = await t.req('POST', '/tracker/transaction', {
      body: `{"transaction":{"order_id":"n1","email":"n@x.cz","props":${props}}}`,
    })
    assert.equal(res.status, 422, res.text)
    assert.deepEqual(Object.keys(res.body.errors), [
      ['transaction', 'props', ...Array(14).fill('0')].join('.'),
    ])
  })

  it('in the bulk update, whose validation answers 400: 400 in the same shape', async () => {
    const res = await t.req('PUT', `/lists/${list}/update-subscribers-bulk`, {
      body: { subscriber_data: [{ email: 'n@x.cz', name: 'x\u0000' }] },
    })
    assert.equal(res.status, 400, res.text)
    assert.deepEqual(Object.keys(res.body.errors), ['subscriber_data.0.name'])
  })

  it('in the path: no such record (404); in the query: 422', async () => {
    const path = await t.req('GET', '/subscribers/a%00b@x.cz')
    assert.equal(path.status, 404, path.text)
    assert.deepEqual(path.body, { message: 'Not Found' })
    const query = await t.req('GET', '/search?query=a%00')
    assert.equal(query.status, 422, query.text)
    assert.deepEqual(Object.keys(query.body.errors), ['query'])
  })

  it('the text \\u0000 (an escaped backslash, then u0000) is no NUL, and is kept as written', async () => {
    const res = await t.req('POST', '/coupons/folders', { body: { name: 'c\\u0000d' } })
    assert.equal(res.status, 200, res.text)
    assert.ok((await folderNames()).includes('c\\u0000d'))
  })
})
