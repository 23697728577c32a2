import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'

const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/

describe('templates', async () => {
  const t = await startTestApp()
  const other = await t.createAccount()

  it('creates through both paths with the api.md fields', async () => {
    for (const path of ['/templates', '/template']) {
      const res = await t.req('POST', path, { body: { name: 'Welcome', html: '<p>Hi *|name|*</p>' } })
      assert.equal(res.status, 200)
      assert.equal(typeof res.body.id, 'number')
      assert.equal(res.body.name, 'Welcome')
      assert.equal(res.body.html, '<p>Hi *|name|*</p>')
      assert.equal(res.body.folder, 0)
      assert.equal(res.body.campaign_id, 0)
      assert.match(res.body.created_at, DATE_TIME)
      assert.match(res.body.updated_at, DATE_TIME)
    }
  })

  it('requires name and html', async () => {
    const res = await t.req('POST', '/templates', { body: {} })
    assert.equal(res.status, 422)
    assert.deepEqual(Object.keys(res.body.errors).sort(), ['html', 'name'])
  })

  it('refuses a name of spaces on create and update, changing nothing', async () => {
    const blank = await t.req('POST', '/templates', { body: { name: '   ', html: '<p>x</p>' } })
    assert.equal(blank.status, 422)
    assert.deepEqual(blank.body, { errors: { name: ['The name field is required.'] } })
    const { id } = (await t.req('POST', '/templates', { body: { name: ' Kept ', html: 'x' } })).body
    const put = await t.req('PUT', `/templates/${id}`, { body: { name: ' \t ' } })
    assert.equal(put.status, 422)
    assert.deepEqual(Object.keys(put.body.errors), ['name'])
    assert.equal((await t.req('GET', `/templates/${id}`)).body.name, 'Kept')
  })

  it('refuses a folder or campaign id beyond the integer columns with 422, not a database error', async () => {
    for (const body of [
      { name: 'Big', html: 'x', folder: 2147483648 },
      { name: 'Big', html: 'x', campaign_id: 1e308 },
    ]) {
      const res = await t.req('POST', '/templates', { body })
      assert.equal(res.status, 422, res.text)
      assert.deepEqual(Object.keys(res.body.errors), [Object.keys(body)[2]])
    }
    const ok = await t.req('POST', '/templates', { body: { name: 'Max', html: 'x', folder: 2147483647 } })
    assert.equal(ok.status, 200, ok.text)
    assert.equal(ok.body.folder, 2147483647)
  })

  it('reads, updates and deletes', async () => {
    const { id } = (await t.req('POST', '/templates', { body: { name: 'A', html: '<b>a</b>', folder: 3 } }))
      .body
    assert.equal((await t.req('GET', `/templates/${id}`)).body.folder, 3)
    // The singular path a PHP client reads by, as it sends it (a bare `?` after it).
    const alias = await t.req('GET', `/template/${id}?`)
    assert.equal(alias.status, 200, alias.text)
    assert.deepEqual(alias.body, (await t.req('GET', `/templates/${id}`)).body)
    assert.equal((await t.req('GET', `/template/${id}`, { key: other.key })).status, 404)
    assert.ok((await t.req('GET', '/templates')).body.some((x: { id: number }) => x.id === id))
    const put = await t.req('PUT', `/templates/${id}`, { body: { html: '<b>b</b>', subject: 'S' } })
    assert.equal(put.body.html, '<b>b</b>')
    assert.equal(put.body.name, 'A')
    assert.equal(put.body.subject, 'S')
    assert.deepEqual((await t.req('DELETE', `/templates/${id}`)).body, { deleted: true })
    assert.deepEqual((await t.req('GET', `/templates/${id}`)).body, { message: 'Template not found' })
  })

  it("hides another account's templates", async () => {
    const { id } = (await t.req('POST', '/templates', { body: { name: 'Mine', html: 'x' } })).body
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await t.req(method, `/templates/${id}`, { key: other.key, body })
      assert.equal(res.status, 404)
    }
    assert.deepEqual((await t.req('GET', '/templates', { key: other.key })).body, [])
    assert.equal((await t.req('GET', '/templates', { key: null })).status, 401)
  })
})
