import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'

const PATH = '/account/settings/webhook'

describe('account webhook settings', async () => {
  // The address rule is on here (the default), so private targets are refused at registration.
  const t = await startTestApp({ worker: false })
  const other = await t.createAccount()

  it('shows no webhook before one is set', async () => {
    const res = await t.req('GET', PATH)
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { url: null })
  })

  it('sets a URL with a new Standard Webhooks secret and shows both', async () => {
    const res = await t.req('POST', PATH, { body: { url: 'https://hooks.example.com/tidings?x=1' } })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { success: true })
    const got = await t.req('GET', PATH)
    assert.equal(got.body.url, 'https://hooks.example.com/tidings?x=1')
    assert.equal(got.body.active, true)
    assert.match(got.body.secret, /^whsec_[A-Za-z0-9+/]+=*$/)
    assert.ok(Buffer.from(got.body.secret.slice(6), 'base64').length >= 24)
  })

  it('keeps the secret when the same URL is posted again and makes a new one for a new URL', async () => {
    await t.req('POST', PATH, { body: { url: 'https://hooks.example.com/a' } })
    const first = (await t.req('GET', PATH)).body.secret
    await t.req('POST', PATH, { body: { url: 'https://hooks.example.com/a' } })
    assert.equal((await t.req('GET', PATH)).body.secret, first)
    await t.req('POST', PATH, { body: { url: 'http://hooks.example.com/b' } })
    const after = (await t.req('GET', PATH)).body
    assert.equal(after.url, 'http://hooks.example.com/b')
    assert.notEqual(after.secret, first)
  })

  it('refuses what is not an http(s) URL, or carries credentials, or points inside', async () => {
    for (const url of [
      'ftp://hooks.example.com/',
      'javascript:alert(1)',
      'not a url',
      'https://user:pass@hooks.example.com/',
      'http://127.0.0.1:8080/hook',
      'http://[::1]/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://10.0.0.7/',
      'http://localhost:3000/',
    ]) {
      const res = await t.req('POST', PATH, { body: { url } })
      assert.equal(res.status, 422, url)
      assert.deepEqual(Object.keys(res.body.errors), ['url'], url)
      assert.equal(res.body.errors.url.length, 1)
    }
    for (const body of [{}, { url: '' }, { url: 5 }]) {
      const res = await t.req('POST', PATH, { body })
      assert.equal(res.status, 422, JSON.stringify(body))
      assert.ok(Array.isArray(res.body.errors.url), JSON.stringify(res.body))
    }
    // The refused posts left the webhook as it was.
    assert.equal((await t.req('GET', PATH)).body.url, 'http://hooks.example.com/b')
  })

  it("keeps accounts apart: another key neither sees nor removes this account's webhook", async () => {
    assert.deepEqual((await t.req('GET', PATH, { key: other.key })).body, { url: null })
    assert.deepEqual((await t.req('DELETE', PATH, { key: other.key })).body, { success: true })
    assert.equal((await t.req('GET', PATH)).body.url, 'http://hooks.example.com/b')
    await t.req('POST', PATH, { key: other.key, body: { url: 'https://other.example.com/' } })
    assert.equal((await t.req('GET', PATH)).body.url, 'http://hooks.example.com/b')
    assert.equal((await t.req('GET', PATH, { key: other.key })).body.url, 'https://other.example.com/')
  })

  it('removes the webhook, and removing none succeeds too', async () => {
    assert.deepEqual((await t.req('DELETE', PATH)).body, { success: true })
    assert.deepEqual((await t.req('GET', PATH)).body, { url: null })
    const again = await t.req('DELETE', PATH)
    assert.equal(again.status, 200)
    assert.deepEqual(again.body, { success: true })
  })

  it('answers 401 without a key', async () => {
    for (const method of ['GET', 'POST', 'DELETE']) {
      const res = await t.req(method, PATH, {
        key: null,
        body: method === 'POST' ? { url: 'https://x.example/' } : undefined,
      })
      assert.equal(res.status, 401)
      assert.deepEqual(res.body, { message: 'Unauthorized' })
    }
  })

  it('accepts private targets when ALLOW_PRIVATE_NETWORK is on', async () => {
    const selfHosted = await startTestApp({ worker: false, config: { allowPrivateNetwork: true } })
    const res = await selfHosted.req('POST', PATH, { body: { url: 'http://127.0.0.1:9/hook' } })
    assert.deepEqual(res.body, { success: true })
    const bad = await selfHosted.req('POST', PATH, { body: { url: 'http://u:p@127.0.0.1:9/hook' } })
    assert.equal(bad.status, 422)
  })
})
