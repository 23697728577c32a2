/**
 * Contract §1, the wire rules every endpoint follows, proven on the lists endpoints (and, where a rule needs a
 * route no module has, on test-only routes added to a real app instance here, never in production code).
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { Type } from '@sinclair/typebox'
import { sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { startTestApp, type TestApp, type TestResponse } from '../../../test/helpers/app.js'
import { buildApp } from '../../app.js'
import type { ApiApp } from './app-types.js'
import { keyAuth } from './auth.js'
import { errorHandler, validationErrors } from './error-handler.js'
import { createAccountService, registerIdempotency } from '../../modules/index.js'
import { ABANDONED_MS } from '../../modules/idempotency/index.js'
import { sha256Hex } from '../ids.js'

const JSON_TYPE = 'application/json'
const ADMIN_KEY = 'admin-key-for-wire-rules-0123456789'

function assertJson(res: TestResponse, status: number): void {
  assert.equal(res.status, status, `status ${res.status}: ${res.text}`)
  assert.equal(res.headers['content-type'], JSON_TYPE, `content type on ${status}`)
}

function assertMessage(res: TestResponse, status: number): void {
  assertJson(res, status)
  assert.deepEqual(Object.keys(res.body), ['message'])
  assert.equal(typeof res.body.message, 'string')
  assert.ok(res.body.message.length > 0)
}

async function listCount(t: TestApp, key?: string): Promise<number> {
  const res = await t.req('GET', '/lists', key ? { key } : {})
  assert.equal(res.status, 200)
  return (res.body as unknown[]).length
}

describe('wire rules: auth', async () => {
  const t = await startTestApp({ config: { adminKey: ADMIN_KEY } })

  it('answers 401 {"message":"Unauthorized"} without a key, with an unknown key and an empty one', async () => {
    for (const key of [null, 'no-such-key', '', 'x'.repeat(600)]) {
      const res = await t.req('GET', '/lists', { key })
      assertJson(res, 401)
      assert.equal(res.text, '{"message":"Unauthorized"}')
    }
  })

  it('answers 401 for a revoked key, through every method', async () => {
    const created = await t.req('POST', '/admin/accounts', {
      key: ADMIN_KEY,
      body: { name: 'Revoked', plan: 'paid' },
    })
    assert.equal(created.status, 200)
    const key = created.body.api_key as string
    const list = await t.req('POST', '/lists', { key, body: { name: 'Before revoke' } })
    assert.equal(list.status, 200)
    assert.equal((await t.req('GET', '/lists', { key })).status, 200)

    const revoked = await t.req('DELETE', '/admin/keys', { key: ADMIN_KEY, body: { api_key: key } })
    assert.deepEqual(revoked.body, { deleted: true })

    for (const [method, url, body] of [
      ['GET', '/lists', undefined],
      ['POST', '/lists', { name: 'After revoke' }],
      ['GET', `/lists/${list.body.id}`, undefined],
      ['PUT', `/lists/${list.body.id}`, { name: 'x' }],
      ['DELETE', `/lists/${list.body.id}`, undefined],
    ] as const) {
      const res = await t.req(method, url, { key, body })
      assertJson(res, 401)
      assert.deepEqual(res.body, { message: 'Unauthorized' }, `${method} ${url}`)
    }
  })

  it('reads the key header in any case', async () => {
    for (const name of ['KEY', 'Key', 'kEy']) {
      const res = await t.req('GET', '/lists', { key: null, headers: { [name]: t.account.key } })
      assertJson(res, 200)
    }
  })

  it('reads the key header in any case over a real socket too', async () => {
    const live = await startTestApp({ listen: true })
    const res = await fetch(`${live.url}/lists`, { headers: { KEY: live.account.key } })
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), JSON_TYPE)
    assert.deepEqual(await res.json(), [])
  })
})

describe('wire rules: request and response format', async () => {
  const t = await startTestApp()

  it('answers exactly application/json on success', async () => {
    const created = await t.req('POST', '/lists', { body: { name: 'Types' } })
    assertJson(created, 200)
    assertJson(await t.req('GET', '/lists'), 200)
    assertJson(await t.req('GET', `/lists/${created.body.id}`), 200)
    assertJson(await t.req('PUT', `/lists/${created.body.id}`, { body: { name: 'T2' } }), 200)
    assertJson(await t.req('DELETE', `/lists/${created.body.id}`), 200)
  })

  it('accepts application/json with a charset, in any case', async () => {
    for (const type of [
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'Application/JSON',
    ]) {
      const res = await t.req('POST', '/lists', {
        body: { name: `Charset ${type}` },
        headers: { 'content-type': type },
      })
      assertJson(res, 200)
      assert.equal(res.body.name, `Charset ${type}`)
    }
  })

  it('accepts a bare trailing ?', async () => {
    const plain = await t.req('GET', '/lists')
    const bare = await t.req('GET', '/lists?')
    assertJson(bare, 200)
    assert.deepEqual(bare.body, plain.body)
    const { id } = (await t.req('POST', '/lists?', { body: { name: 'Question mark' } })).body
    assertJson(await t.req('GET', `/lists/${id}?`), 200)
  })

  it('routes a path with a trailing slash or doubled slashes as the plain path', async () => {
    const { id } = (await t.req('POST', '//lists', { body: { name: 'Slashes' } })).body
    assert.ok(id)
    const plain = await t.req('GET', `/lists/${id}`)
    for (const path of [`//lists/${id}`, `/lists//${id}/`, `/lists/${id}/`]) {
      const res = await t.req('GET', path)
      assertJson(res, 200)
      assert.deepEqual(res.body, plain.body, path)
    }
  })

  it('accepts a JSON body on DELETE, and an empty body with a JSON content type', async () => {
    const a = (await t.req('POST', '/lists', { body: { name: 'Del A' } })).body
    const withBody = await t.req('DELETE', `/lists/${a.id}`, { body: { reason: 'cleanup', ids: [1, 2] } })
    assertJson(withBody, 200)
    assert.deepEqual(withBody.body, { deleted: true })

    const b = (await t.req('POST', '/lists', { body: { name: 'Del B' } })).body
    const empty = await t.req('DELETE', `/lists/${b.id}`, {
      body: '',
      headers: { 'content-type': JSON_TYPE },
    })
    assertJson(empty, 200)
    assert.deepEqual(empty.body, { deleted: true })

    const c = (await t.req('POST', '/lists', { body: { name: 'Del C' } })).body
    const blank = await t.req('DELETE', `/lists/${c.id}`, {
      body: '  \n',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    })
    assertJson(blank, 200)
    assert.equal((await t.req('GET', `/lists/${c.id}`)).status, 404)
  })

  it('answers an unknown route with 404 {message}, with and without a key', async () => {
    for (const [method, url, key] of [
      ['GET', '/no-such-route', undefined],
      ['POST', '/lists/1/no-such-thing', undefined],
      ['PATCH', '/lists', undefined],
      ['GET', '/no-such-route', null],
    ] as const) {
      const res = await t.req(method, url, key === null ? { key: null } : {})
      assertMessage(res, 404)
    }
  })

  it('answers a path that fails before routing in the same {message} shape', async () => {
    for (const key of [undefined, null]) {
      const opts = key === null ? { key: null } : {}
      const badEncoding = await t.req('GET', '/lists/%E0%A4%A', opts)
      assertMessage(badEncoding, 400)
      const tooLong = await t.req('GET', `/lists/${'9'.repeat(1200)}`, opts)
      assertMessage(tooLong, 414)
    }
  })

  it('answers an unknown record with 404 {message}', async () => {
    assertMessage(await t.req('GET', '/lists/987654'), 404)
    assertMessage(await t.req('PUT', '/lists/987654', { body: { name: 'x' } }), 404)
    assertMessage(await t.req('DELETE', '/lists/987654'), 404)
  })

  it('answers malformed JSON with 400 {message}', async () => {
    for (const body of ['{"name":', '{name: "x"}', 'nope', '[1,]']) {
      const res = await t.req('POST', '/lists', { body, headers: { 'content-type': JSON_TYPE } })
      assertMessage(res, 400)
    }
    const onDelete = await t.req('DELETE', '/lists/1', { body: '{', headers: { 'content-type': JSON_TYPE } })
    assertMessage(onDelete, 400)
  })

  it("reads a body of [] (PHP's empty array) as {}, and refuses any other array as the body", async () => {
    const json = { 'content-type': JSON_TYPE }
    const list = (await t.req('POST', '/lists', { body: { name: 'Kept', from_name: 'Shop' } })).body
    const updated = await t.req('PUT', `/lists/${list.id}`, { body: '[]', headers: json })
    assertJson(updated, 200)
    // Every field as it was; `updated_at` is the update's own time, a second later when one ticked over between.
    const withoutTime = ({ updated_at: _, ...rest }: Record<string, unknown>) => rest
    assert.deepEqual(withoutTime(updated.body), withoutTime(list))
    const created = await t.req('POST', '/lists', { body: '[]', headers: json })
    assertJson(created, 422)
    assert.deepEqual(Object.keys(created.body.errors), ['name'])
    const other = await t.req('PUT', `/lists/${list.id}`, { body: '[{"name":"x"}]', headers: json })
    assertJson(other, 422)
    assert.deepEqual(Object.keys(other.body.errors), ['body'])
  })

  it('drops __proto__ from request bodies', async () => {
    const res = await t.req('POST', '/lists', {
      body: '{"name":"Proto","__proto__":{"polluted":true}}',
      headers: { 'content-type': JSON_TYPE },
    })
    assertJson(res, 200)
    assert.equal(({} as Record<string, unknown>).polluted, undefined)
  })

  it('refuses numbers that are not finite: 422 in a query or body, 404 as a path id, never a 500', async () => {
    // Ajv coerced `1e400` and `Infinity` to ±Infinity and passed them on past minimum and maximum (finite-numbers.ts).
    for (const value of ['1e400', 'Infinity', '-Infinity', '-1e400']) {
      for (const path of [
        `/tracker/transaction?page=${value}`,
        `/tracker/transaction?per_page=${value}`,
        `/campaigns?page=${value}`,
      ]) {
        const res = await t.req('GET', path)
        assertJson(res, 422)
        const field = path.includes('per_page') ? 'per_page' : 'page'
        assert.deepEqual(res.body.errors, { [field]: [`The ${field} must be a number.`] }, path)
      }
      assertMessage(await t.req('GET', `/lists/${value}`), 404)
      assertMessage(await t.req('GET', `/campaigns/${value}`), 404)
    }
    const coupons = await t.req('POST', '/coupons/import', { body: { folderId: 'Infinity', codes: ['A'] } })
    assertJson(coupons, 422)
    assert.deepEqual(Object.keys(coupons.body.errors), ['folderId'])
    const send = await t.req('POST', '/transactional/send-template', {
      body: {
        message: {
          template_id: '1e400',
          subject: 's',
          from_name: 'S',
          from_email: 's@x.cz',
          to: [{ email: 'a@x.cz' }],
        },
      },
    })
    assertJson(send, 422)
    assert.deepEqual(send.body.errors['message.template_id'], ['The template_id must be a number.'])
    // Finite values in range are as before.
    assertJson(await t.req('GET', '/tracker/transaction?page=1e0&per_page=5'), 200)
  })

  it('answers field errors with 422 {errors:{field:[...]}}', async () => {
    const res = await t.req('POST', '/lists', {
      body: { name: 7, from_email: 'nope', double_optin: 'maybe' },
    })
    assertJson(res, 422)
    assert.deepEqual(Object.keys(res.body), ['errors'])
    for (const [field, messages] of Object.entries(res.body.errors)) {
      assert.ok(Array.isArray(messages) && messages.length > 0, field)
      for (const m of messages as unknown[]) assert.equal(typeof m, 'string')
    }
    assert.ok(res.body.errors.from_email)
    assert.ok(res.body.errors.double_optin)
  })
})

describe('wire rules: body limit', async () => {
  const t = await startTestApp({ config: { bodyLimitBytes: 1024 } })

  it('answers 413 {message} over the limit and takes bodies under it', async () => {
    const small = await t.req('POST', '/lists', { body: { name: 'Small', conf_message: 'x'.repeat(500) } })
    assertJson(small, 200)
    const big = await t.req('POST', '/lists', { body: { name: 'Big', conf_message: 'x'.repeat(5000) } })
    assertMessage(big, 413)
    const onPut = await t.req('PUT', `/lists/${small.body.id}`, { body: { conf_message: 'y'.repeat(5000) } })
    assertMessage(onPut, 413)
    assert.equal((await t.req('GET', `/lists/${small.body.id}`)).body.list.conf_message, 'x'.repeat(500))
  })
})

describe('wire rules: rate limit', async () => {
  const t = await startTestApp({ config: { rateLimitPerMinute: 3 } })
  const other = await t.createAccount()

  it('answers the 4th request of one key in a minute with 429 and its headers', async () => {
    for (let i = 1; i <= 3; i++) {
      const res = await t.req('GET', '/lists')
      assertJson(res, 200)
      assert.equal(res.headers['ratelimit-policy'], '3;w=60')
      assert.match(String(res.headers['ratelimit']), new RegExp(`^limit=3, remaining=${3 - i}, reset=\\d+$`))
    }
    const limited = await t.req('GET', '/lists')
    assertMessage(limited, 429)
    const retryAfter = Number(limited.headers['retry-after'])
    assert.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 60, `Retry-After ${retryAfter}`)
    assert.equal(limited.headers['ratelimit-policy'], '3;w=60')
    assert.match(String(limited.headers['ratelimit']), /^limit=3, remaining=0, reset=\d+$/)
    // Writes are limited alike.
    assertMessage(await t.req('POST', '/lists', { body: { name: 'Over' } }), 429)
  })

  it('counts per key: another key is still allowed', async () => {
    const res = await t.req('GET', '/lists', { key: other.key })
    assertJson(res, 200)
    assert.match(String(res.headers['ratelimit']), /^limit=3, remaining=2, reset=\d+$/)
  })

  it('leaves routes without a key alone', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await t.req('GET', '/health', { key: null })).status, 200)
  })
})

describe('wire rules: rate limit 0 turns it off', async () => {
  const t = await startTestApp({ config: { rateLimitPerMinute: 0 } })

  it('never answers 429 and sends no RateLimit headers', async () => {
    for (let i = 0; i < 30; i++) {
      const res = await t.req('GET', '/lists')
      assertJson(res, 200)
      assert.equal(res.headers['ratelimit'], undefined)
      assert.equal(res.headers['ratelimit-policy'], undefined)
    }
  })
})

describe('wire rules: Idempotency-Key', async () => {
  const t = await startTestApp()
  const other = await t.createAccount()

  it('replays the first response of a repeated POST and creates nothing new', async () => {
    const headers = { 'idempotency-key': 'create-news-1' }
    const first = await t.req('POST', '/lists', { body: { name: 'News' }, headers })
    assertJson(first, 200)
    assert.equal(first.headers['idempotent-replayed'], undefined)
    const count = await listCount(t)

    const again = await t.req('POST', '/lists', { body: { name: 'News' }, headers })
    assertJson(again, 200)
    assert.equal(again.headers['idempotent-replayed'], 'true')
    assert.equal(again.text, first.text)
    // Key order of the body does not make it another request.
    const reordered = await t.req('POST', '/lists', {
      body: { name: 'News' },
      headers: { 'Idempotency-Key': 'create-news-1' },
    })
    assert.equal(reordered.text, first.text)
    assert.equal(await listCount(t), count)
  })

  it('answers 422 {errors} for the same key with another body, and creates nothing', async () => {
    const headers = { 'idempotency-key': 'create-news-2' }
    assertJson(await t.req('POST', '/lists', { body: { name: 'One' }, headers }), 200)
    const count = await listCount(t)
    const other = await t.req('POST', '/lists', { body: { name: 'Two' }, headers })
    assertJson(other, 422)
    assert.deepEqual(Object.keys(other.body), ['errors'])
    assert.ok(Array.isArray(other.body.errors['Idempotency-Key']))
    assert.equal(await listCount(t), count)
  })

  it('scopes keys per account', async () => {
    const headers = { 'idempotency-key': 'shared-key' }
    const mine = await t.req('POST', '/lists', { body: { name: 'Shared' }, headers })
    const theirs = await t.req('POST', '/lists', { key: other.key, body: { name: 'Shared' }, headers })
    assertJson(theirs, 200)
    assert.equal(theirs.headers['idempotent-replayed'], undefined)
    assert.notEqual(theirs.body.id, mine.body.id)
    assert.equal(await listCount(t, other.key), 1)
  })

  it('does not apply to GET or PUT', async () => {
    const headers = { 'idempotency-key': 'not-for-get-put' }
    const { id } = (await t.req('POST', '/lists', { body: { name: 'P0' } })).body
    const put1 = await t.req('PUT', `/lists/${id}`, { body: { name: 'P1' }, headers })
    const put2 = await t.req('PUT', `/lists/${id}`, { body: { name: 'P2' }, headers })
    assertJson(put2, 200)
    assert.equal(put1.headers['idempotent-replayed'], undefined)
    assert.equal(put2.headers['idempotent-replayed'], undefined)
    assert.equal(put2.body.name, 'P2')
    const get1 = await t.req('GET', `/lists/${id}`, { headers })
    assert.equal(get1.headers['idempotent-replayed'], undefined)
    assert.equal(get1.body.list.name, 'P2')
    // The key was not consumed by GET/PUT: a first POST with it runs.
    const post = await t.req('POST', '/lists', { body: { name: 'P3' }, headers })
    assertJson(post, 200)
    assert.equal(post.headers['idempotent-replayed'], undefined)
  })

  it('answers 409 while a first request runs, and lets a retry take over a claim its crashed process left', async () => {
    // What a process killed mid-request leaves: a claim with the request's hash and no response.
    const body = { name: 'Crash' }
    const hash = sha256Hex(`/lists\n/lists\n${JSON.stringify(body)}`)
    const claimAt = (key: string, ageMs: number) =>
      t.ctx.db.execute(sql`INSERT INTO idempotency_keys (account_id, key, request_hash, created_at)
        VALUES (${t.account.id}, ${key}, ${hash}, ${new Date(t.ctx.clock.now().getTime() - ageMs).toISOString()})`)
    await claimAt('running', 60_000)
    const running = await t.req('POST', '/lists', { body, headers: { 'idempotency-key': 'running' } })
    assertJson(running, 409)
    await claimAt('crashed', ABANDONED_MS + 60_000)
    const count = await listCount(t)
    const retry = await t.req('POST', '/lists', { body, headers: { 'idempotency-key': 'crashed' } })
    assertJson(retry, 200)
    assert.equal(retry.headers['idempotent-replayed'], undefined)
    assert.equal(await listCount(t), count + 1)
    const replay = await t.req('POST', '/lists', { body, headers: { 'idempotency-key': 'crashed' } })
    assert.equal(replay.headers['idempotent-replayed'], 'true')
    assert.equal(replay.text, retry.text)
  })

  it('does not record a request that failed validation', async () => {
    const headers = { 'idempotency-key': 'invalid-first' }
    assertJson(await t.req('POST', '/lists', { body: {}, headers }), 422)
    const ok = await t.req('POST', '/lists', { body: { name: 'Valid now' }, headers })
    assertJson(ok, 200)
    assert.equal(ok.headers['idempotent-replayed'], undefined)
  })
})

/** The real app plus test-only routes: a 500, and a nested body schema, registered before it is ready. */
async function appWithTestRoutes(t: TestApp): Promise<FastifyInstance> {
  const app = (await buildApp(t.ctx)) as unknown as ApiApp
  app.get('/test/throw', async () => {
    throw new Error('secret detail at /srv/app.ts:12')
  })
  app.get('/test/sql', async () => {
    await t.ctx.db.execute(sql`SELECT password FROM no_such_table WHERE id = ${42}`)
    return {}
  })
  app.get('/test/error-500-code', async () => {
    throw Object.assign(new Error('upstream said: connection refused 10.0.0.5'), { statusCode: 502 })
  })
  app.post(
    '/test/nested',
    {
      schema: {
        body: Type.Object({
          subscriber_data: Type.Array(
            Type.Object({
              email: Type.String({ format: 'email' }),
              tags: Type.Optional(Type.Array(Type.String())),
            }),
            { maxItems: 3 },
          ),
          update_existing: Type.Optional(Type.Boolean()),
        }),
      },
    },
    async () => ({ ok: true }),
  )
  // Behind the key and the idempotency hooks, as a module's POST route would be.
  await app.register(async (scope) => {
    const api = scope as ApiApp
    api.addHook('onRequest', keyAuth(createAccountService(t.ctx).resolveKey))
    registerIdempotency(api, t.ctx)
    let calls = 0
    api.post('/test/flaky', async () => {
      calls++
      if (calls === 1) throw new Error('first attempt fails')
      return { calls }
    })
  })
  await app.ready()
  return app as unknown as FastifyInstance
}

describe('wire rules: server errors and validation through real routes', async () => {
  const t = await startTestApp()
  const app = await appWithTestRoutes(t)
  const inject = async (method: 'GET' | 'POST', url: string, body?: unknown, key?: string) => {
    const res = await app.inject({
      method,
      url,
      headers: { ...(body === undefined ? {} : { 'content-type': JSON_TYPE }), ...(key ? { key } : {}) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    })
    return {
      status: res.statusCode,
      text: res.body,
      body: res.body ? JSON.parse(res.body) : undefined,
      headers: res.headers,
    } as TestResponse
  }

  it('answers 500 {"message":"Internal Server Error"} with no stack trace or SQL', async () => {
    for (const url of ['/test/throw', '/test/sql', '/test/error-500-code']) {
      const res = await inject('GET', url)
      assertJson(res, 500)
      assert.equal(res.text, '{"message":"Internal Server Error"}', url)
      assert.doesNotMatch(res.text, /no_such_table|SELECT|secret|stack|10\.0\.0\.5/)
    }
  })

  it('answers 422 with nested field paths', async () => {
    const res = await inject('POST', '/test/nested', {
      subscriber_data: [{ email: 'a@b.cz' }, { email: 'not-an-address' }, { tags: { a: 1 } }],
      update_existing: 'perhaps',
    })
    assertJson(res, 422)
    assert.deepEqual(res.body, {
      errors: {
        'subscriber_data.1.email': ['The email must be a valid email address.'],
        'subscriber_data.2.email': ['The email field is required.'],
        'subscriber_data.2.tags': ['The tags must be of type array.'],
        update_existing: ['The update_existing must be of type boolean.'],
      },
    })
    const tooMany = await inject('POST', '/test/nested', {
      subscriber_data: [{ email: 'a@b.cz' }, { email: 'b@b.cz' }, { email: 'c@b.cz' }, { email: 'd@b.cz' }],
    })
    assert.deepEqual(tooMany.body, {
      errors: { subscriber_data: ['The subscriber_data must not have more than 3 items.'] },
    })
    const noBody = await inject('POST', '/test/nested', '')
    assertJson(noBody, 422)
    assert.ok(noBody.body.errors.body || noBody.body.errors.subscriber_data)
  })

  it('lets a POST whose first attempt failed with a 500 be retried with the same Idempotency-Key', async () => {
    const headers = { key: t.account.key, 'content-type': JSON_TYPE, 'idempotency-key': 'flaky-1' }
    const first = await app.inject({ method: 'POST', url: '/test/flaky', headers, payload: '{}' })
    assert.equal(first.statusCode, 500)
    assert.equal(first.body, '{"message":"Internal Server Error"}')
    const second = await app.inject({ method: 'POST', url: '/test/flaky', headers, payload: '{}' })
    assert.equal(second.statusCode, 200)
    assert.deepEqual(JSON.parse(second.body), { calls: 2 })
    const third = await app.inject({ method: 'POST', url: '/test/flaky', headers, payload: '{}' })
    assert.equal(third.headers['idempotent-replayed'], 'true')
    assert.deepEqual(JSON.parse(third.body), { calls: 2 })
    assert.equal(third.headers['content-type'], JSON_TYPE)
  })
})

describe('validationErrors', () => {
  it('turns ajv issues into Laravel-style field errors with dotted paths', () => {
    const errors = validationErrors([
      { instancePath: '/subscriber_data/0/email', keyword: 'format', params: { format: 'email' } },
      { instancePath: '/subscriber_data/1', keyword: 'required', params: { missingProperty: 'email' } },
      { instancePath: '', keyword: 'required', params: { missingProperty: 'name' } },
      { instancePath: '/subscriber_data/0/tags/3', keyword: 'maxLength', params: { limit: 50 } },
      { instancePath: '/custom_fields/a~1b', keyword: 'type', params: { type: 'string' } },
      { instancePath: '/list_id', keyword: 'minimum', params: { limit: 1 } },
      { instancePath: '/list_id', keyword: 'type', params: { type: 'integer' } },
    ])
    assert.deepEqual(errors, {
      'subscriber_data.0.email': ['The email must be a valid email address.'],
      'subscriber_data.1.email': ['The email field is required.'],
      name: ['The name field is required.'],
      'subscriber_data.0.tags.3': ['The tags.3 must not be greater than 50 characters.'],
      'custom_fields.a/b': ['The a/b must be of type string.'],
      list_id: ['The list_id must be at least 1.', 'The list_id must be of type integer.'],
    })
  })

  it('reports a failed union once, by its own summary', () => {
    const errors = validationErrors([
      { instancePath: '/from_email', keyword: 'format', params: { format: 'email' } },
      { instancePath: '/from_email', keyword: 'const', params: { allowedValue: '' } },
      { instancePath: '/from_email', keyword: 'anyOf', params: {} },
    ])
    assert.deepEqual(errors, { from_email: ['The selected from_email is invalid.'] })
  })

  it("keeps the errors of a field whose name merely starts with a failed union's name", () => {
    const errors = validationErrors([
      { instancePath: '/tag/0', keyword: 'type', params: { type: 'string' } },
      { instancePath: '/tag', keyword: 'type', params: { type: 'string' } },
      { instancePath: '/tag', keyword: 'anyOf', params: {} },
      { instancePath: '/tags/0', keyword: 'maxLength', params: { limit: 50 } },
    ])
    assert.deepEqual(errors, {
      tag: ['The selected tag is invalid.'],
      'tags.0': ['The tags.0 must not be greater than 50 characters.'],
    })
  })

  it('names the body itself when the whole body is wrong', () => {
    assert.deepEqual(validationErrors([{ instancePath: '', keyword: 'type', params: { type: 'object' } }]), {
      body: ['The body must be of type object.'],
    })
  })
})

describe('errorHandler on a bare Fastify instance', () => {
  it('writes the contract shapes by itself', async () => {
    const { default: Fastify } = await import('fastify')
    const app = Fastify({ logger: false })
    app.setErrorHandler(errorHandler)
    app.get('/boom', async () => {
      throw new TypeError("Cannot read properties of undefined (reading 'rows')")
    })
    app.get('/teapot', async () => {
      throw Object.assign(new Error('I am a teapot'), { statusCode: 418 })
    })
    // As drizzle wraps the driver's error when a concurrent delete took the row an insert refers to.
    app.get('/gone', async () => {
      const driver = Object.assign(new Error('violates foreign key constraint'), {
        code: '23503',
        detail: 'Key (list_id)=(7) is not present in table "lists".',
      })
      throw new Error('Failed query: insert into "memberships" ...', { cause: driver })
    })
    // A detail the handler cannot read (another server language) still answers 404.
    app.get('/gone-unnamed', async () => {
      throw Object.assign(new Error('violates foreign key constraint'), {
        code: '23503',
        detail: 'Schlüssel',
      })
    })
    try {
      const boom = await app.inject({ method: 'GET', url: '/boom' })
      assert.equal(boom.statusCode, 500)
      assert.deepEqual(boom.json(), { message: 'Internal Server Error' })
      const teapot = await app.inject({ method: 'GET', url: '/teapot' })
      assert.equal(teapot.statusCode, 418)
      assert.deepEqual(teapot.json(), { message: 'I am a teapot' })
      const gone = await app.inject({ method: 'GET', url: '/gone' })
      assert.equal(gone.statusCode, 404)
      assert.deepEqual(gone.json(), { message: 'List not found' })
      const unnamed = await app.inject({ method: 'GET', url: '/gone-unnamed' })
      assert.equal(unnamed.statusCode, 404)
      assert.deepEqual(unnamed.json(), { message: 'Not Found' })
    } finally {
      await app.close()
    }
  })
})
