import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'

const ADMIN_KEY = 'admin-key-for-tests-0123456789'

describe('admin API', async () => {
  const t = await startTestApp({ config: { adminKey: ADMIN_KEY } })
  const admin = { key: ADMIN_KEY }

  it('creates an account whose key works and shows once', async () => {
    const res = await t.req('POST', '/admin/accounts', { ...admin, body: { name: 'Shop', plan: 'paid' } })
    assert.equal(res.status, 200)
    assert.equal(typeof res.body.account_id, 'number')
    assert.ok(res.body.api_key.length >= 43, 'a key carries at least 32 random bytes')
    const health = await t.req('GET', '/health', { key: null })
    assert.equal(health.status, 200)
    // the new key authenticates against the API
    const other = await t.req('GET', '/no-such-route', { key: res.body.api_key })
    assert.equal(other.status, 404)
  })

  it('refuses a wrong admin key with 401 and the account key too', async () => {
    assert.deepEqual((await t.req('POST', '/admin/accounts', { key: 'nope', body: { name: 'x' } })).body, {
      message: 'Unauthorized',
    })
    const res = await t.req('POST', '/admin/accounts', { body: { name: 'x' } })
    assert.equal(res.status, 401)
  })

  it('validates the body with field errors', async () => {
    const res = await t.req('POST', '/admin/accounts', { ...admin, body: { plan: 'gold' } })
    assert.equal(res.status, 422)
    assert.ok(res.body.errors.name)
    assert.ok(res.body.errors.plan)
  })

  it('changes the plan, adds and revokes keys', async () => {
    const created = (await t.req('POST', '/admin/accounts', { ...admin, body: { name: 'A' } })).body
    const plan = await t.req('PUT', `/admin/accounts/${created.account_id}`, {
      ...admin,
      body: { plan: 'marketer' },
    })
    assert.deepEqual(plan.body, { account_id: created.account_id, name: 'A', plan: 'marketer' })
    const key = await t.req('POST', `/admin/accounts/${created.account_id}/keys`, admin)
    assert.equal(key.status, 200)
    const revoke = await t.req('DELETE', '/admin/keys', { ...admin, body: { api_key: key.body.api_key } })
    assert.deepEqual(revoke.body, { deleted: true })
    const again = await t.req('DELETE', '/admin/keys', { ...admin, body: { api_key: key.body.api_key } })
    assert.equal(again.status, 404)
    assert.equal(typeof again.body.message, 'string')
    assert.equal(
      (await t.req('PUT', '/admin/accounts/99999', { ...admin, body: { plan: 'free' } })).status,
      404,
    )
  })
})

describe('admin API without ADMIN_KEY', async () => {
  const t = await startTestApp()
  it('answers 404 on every admin path', async () => {
    const res = await t.req('POST', '/admin/accounts', { key: 'anything', body: { name: 'x' } })
    assert.equal(res.status, 404)
    assert.deepEqual(res.body, { message: 'Not Found' })
  })
})
