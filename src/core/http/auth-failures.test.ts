import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import Fastify from 'fastify'
import { startTestApp } from '../../../test/helpers/app.js'
import { loadConfig } from '../config.js'
import { sha256Hex } from '../ids.js'
import { AuthFailureLimiter, clientOf } from './auth-failures.js'
import { keyAuth, type AuthAccount } from './auth.js'
import { errorHandler } from './error-handler.js'

const LIMIT = 5
const madeUp = (i: number) => `made-up-key-${i}-${'x'.repeat(30)}`

describe('failed authentication is limited per client address', async () => {
  // The per-key limit on too, so both kinds of 429 and their headers meet on one app.
  const t = await startTestApp({ config: { authFailuresPerMinute: LIMIT, rateLimitPerMinute: 1000 } })
  const get = (key: string | undefined, remoteAddress = '203.0.113.7') =>
    t.app.inject({ method: 'GET', url: '/lists', remoteAddress, headers: key === undefined ? {} : { key } })

  it('answers a loop of made-up keys from one address with 401 up to the limit, then 429', async () => {
    // One valid request first: this key is then vouched for at this address.
    assert.equal((await get(t.account.key)).statusCode, 200)
    for (let i = 0; i < LIMIT - 1; i++) assert.equal((await get(madeUp(i))).statusCode, 401, `try ${i}`)
    // A missing key counts as a failure too.
    assert.equal((await get(undefined)).statusCode, 401)
    const limited = await get(madeUp(LIMIT))
    assert.equal(limited.statusCode, 429)
    assert.equal(limited.headers['content-type'], 'application/json')
    assert.deepEqual(Object.keys(limited.json()), ['message'])
    const retryAfter = Number(limited.headers['retry-after'])
    assert.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 60, `Retry-After ${retryAfter}`)
    assert.equal(limited.headers['ratelimit-policy'], `${LIMIT};w=60`)
    assert.equal(limited.headers['ratelimit'], `limit=${LIMIT}, remaining=0, reset=${retryAfter}`)
    assert.equal(limited.headers['ratelimit-remaining'], '0')
    // Still limited: a missing key, and a key never seen to work, whatever it is.
    assert.equal((await get(undefined)).statusCode, 429)
    assert.equal((await get(madeUp(LIMIT + 1))).statusCode, 429)
  })

  it('keeps serving a key that worked before from the blocked address, and other addresses', async () => {
    const ok = await get(t.account.key)
    assert.equal(ok.statusCode, 200)
    // Its own per-key figures, not the failure limit's.
    assert.match(String(ok.headers['ratelimit']), /^limit=1000, remaining=\d+, reset=\d+$/)
    assert.equal((await get(madeUp(100), '198.51.100.9')).statusCode, 401)
    const other = await t.createAccount()
    assert.equal((await get(other.key, '198.51.100.9')).statusCode, 200)
  })

  it('counts an IPv6 /64 as one client', async () => {
    for (let i = 0; i < LIMIT; i++) {
      const res = await get(madeUp(200 + i), `2001:db8:1:2::${(i + 1).toString(16)}`)
      assert.equal(res.statusCode, 401, `try ${i}`)
    }
    assert.equal((await get(madeUp(300), '2001:db8:1:2:ffff::1')).statusCode, 429)
    assert.equal((await get(madeUp(301), '2001:db8:1:3::1')).statusCode, 401)
  })

  it('leaves public pages alone', async () => {
    const res = await get(undefined)
    assert.equal(res.statusCode, 429)
    const health = await t.app.inject({ method: 'GET', url: '/health', remoteAddress: '203.0.113.7' })
    assert.equal(health.statusCode, 200)
  })
})

describe('a limited unknown key costs no lookup', () => {
  it('resolves nothing once the address is over the limit', async () => {
    const looked: string[] = []
    const known = sha256Hex('the-real-key')
    const account: AuthAccount = { id: 1, plan: 'paid' }
    const resolve = async (hash: string) => {
      looked.push(hash)
      return hash === known ? account : null
    }
    const app = Fastify()
    app.setErrorHandler(errorHandler)
    app.addHook('onRequest', keyAuth(resolve, new AuthFailureLimiter(2)))
    app.get('/x', async (req) => ({ account: req.account.id }))
    const get = (key: string, remoteAddress = '192.0.2.1') =>
      app.inject({ method: 'GET', url: '/x', remoteAddress, headers: { key } })

    assert.equal((await get('the-real-key')).statusCode, 200)
    assert.equal((await get('guess-1')).statusCode, 401)
    assert.equal((await get('guess-2')).statusCode, 401)
    assert.equal(looked.length, 3)
    for (let i = 3; i < 50; i++) assert.equal((await get(`guess-${i}`)).statusCode, 429)
    assert.equal(looked.length, 3, 'no lookup for a limited unknown key')
    // The key that worked is still looked up (a revocation still holds) and still served.
    assert.equal((await get('the-real-key')).statusCode, 200)
    assert.equal(looked.length, 4)
    await app.close()
  })
})

describe('AuthFailureLimiter', () => {
  it('opens again when the minute is over', () => {
    const l = new AuthFailureLimiter(2)
    const t0 = 1_000_000
    l.failed('192.0.2.1', t0)
    assert.equal(l.retryAfter('192.0.2.1', t0 + 1), 0)
    l.failed('192.0.2.1', t0 + 1000)
    assert.equal(l.retryAfter('192.0.2.1', t0 + 1000), 59)
    assert.equal(l.retryAfter('192.0.2.2', t0 + 1000), 0)
    assert.equal(l.retryAfter('192.0.2.1', t0 + 59_999), 1)
    assert.equal(l.retryAfter('192.0.2.1', t0 + 60_000), 0)
    l.failed('192.0.2.1', t0 + 60_000)
    assert.equal(l.retryAfter('192.0.2.1', t0 + 60_000), 0)
  })

  it('vouches for a key for ten minutes', () => {
    const l = new AuthFailureLimiter(1)
    l.vouch('h', 0)
    assert.equal(l.isVouched('h', 599_999), true)
    assert.equal(l.isVouched('h', 600_000), false)
    assert.equal(l.isVouched('other', 1), false)
  })

  it('groups addresses into clients', () => {
    assert.equal(clientOf('192.0.2.1'), '192.0.2.1')
    assert.equal(clientOf('::ffff:192.0.2.1'), '192.0.2.1')
    assert.equal(clientOf('2001:db8::1'), '2001:db8:0:0::/64')
    assert.equal(clientOf('2001:db8:0:0:ffff::2'), '2001:db8:0:0::/64')
    assert.equal(clientOf('fe80::1%eth0'), 'fe80:0:0:0::/64')
  })

  it('is configured by AUTH_FAILS_PER_MINUTE (default 60, 0 turns it off)', () => {
    assert.equal(loadConfig({}).authFailuresPerMinute, 60)
    assert.equal(loadConfig({ AUTH_FAILS_PER_MINUTE: '0' }).authFailuresPerMinute, 0)
    assert.equal(loadConfig({ AUTH_FAILS_PER_MINUTE: '10' }).authFailuresPerMinute, 10)
    assert.throws(() => loadConfig({ AUTH_FAILS_PER_MINUTE: '-1' }), /AUTH_FAILS_PER_MINUTE/)
  })
})
