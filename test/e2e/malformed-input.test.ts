import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../helpers/app.js'
import { startDnsServer } from '../helpers/dns-server.js'

const ADMIN_KEY = 'admin-key-for-malformed-input-0123'

interface Schema {
  type?: string | string[]
  properties?: Record<string, Schema>
  items?: Schema
  anyOf?: Schema[]
  enum?: unknown[]
  const?: unknown
}
interface Operation {
  parameters?: { in: string; name: string }[]
  requestBody?: { content?: Record<string, { schema?: Schema }> }
}
type OpenApi = { paths: Record<string, Record<string, Operation>> }

/** A value of `schema` with every property filled and every leaf the given one of its type. */
function sample(schema: Schema | undefined, leaf: { text: unknown; int: unknown }, depth = 0): unknown {
  if (!schema || depth > 6) return leaf.text
  if (schema.const !== undefined) return schema.const
  if (schema.enum) return schema.enum[0]
  if (schema.anyOf) {
    const branch = schema.anyOf.find((s) => s.type !== 'null') ?? schema.anyOf[0]
    return sample(branch, leaf, depth + 1)
  }
  const type = Array.isArray(schema.type) ? schema.type.find((x) => x !== 'null') : schema.type
  switch (type) {
    case 'object':
      return Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([k, s]) => [k, sample(s, leaf, depth + 1)]),
      )
    case 'array':
      return [sample(schema.items, leaf, depth + 1)]
    case 'integer':
    case 'number':
      return leaf.int
    case 'boolean':
      return true
    default:
      return leaf.text
  }
}

/**
 * Contract §1: bad input is answered in the contract's shapes, never with a 500. Every operation of the
 * OpenAPI document gets a body (and query) with a NUL character in every string, which PostgreSQL cannot
 * store, one with integers past every integer column, on an existing record's path and on a path with a NUL
 * in it, one with a lone UTF-16 surrogate everywhere, one with the date 9999-12-31, and one with a one-element
 * array for every value. (Sending malformed input to every operation once found sixteen 500s, and arrays for
 * values one more; this keeps them found.)
 * Nothing leaves the machine: the worker does not run, DNS goes to a local server, and no value is a URL.
 */
describe('malformed input on every operation', async () => {
  const dns = await startDnsServer()
  const t = await startTestApp({
    worker: false,
    config: { adminKey: ADMIN_KEY, dnsServers: [dns.address], feedRefreshWaitSeconds: 0 },
  })
  const list = (await t.req('POST', '/lists', { body: { name: 'L' } })).body.id as number
  const doc = (t.app as unknown as { swagger(): OpenApi }).swagger()

  it('answers none of them with a 5xx', async () => {
    const variants: {
      leaf: { text: unknown; int: unknown }
      query: string
      param: string | null
      only?: RegExp
    }[] = [
      { leaf: { text: 'a\u0000b', int: 1 }, query: 'a%00b', param: null },
      { leaf: { text: 'x', int: 2 ** 53 }, query: '9007199254740992', param: null },
      { leaf: { text: 'x', int: 1 }, query: 'x', param: 'a%00b' },
      // A lone surrogate, which JSON.stringify writes as its escape; in the query and path, its bytes.
      { leaf: { text: 'a\ud800b', int: 1 }, query: 'a%ED%A0%80b', param: 'a%ED%A0%80b' },
      // The calendar's last day, in every string and query value: a range up to it ends past the year 9999.
      // Only in the date parameters of a query: another parameter's bad value would be answered first.
      { leaf: { text: '9999-12-31', int: 1 }, query: '9999-12-31', param: null, only: /date|_at\]/ },
      // A one-element array in place of every value: Ajv's coercion passed `["a"]` through a union that tried
      // null first, uncoerced, to a service that read a string.
      { leaf: { text: ['a'], int: [1] }, query: 'x', param: null },
    ]
    const failures: string[] = []
    let sent = 0
    for (const [template, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const schema = op.requestBody?.content?.['application/json']?.schema
        const query = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name)
        for (const v of variants) {
          const path = template.replace(
            /\{(\w+)\}/g,
            (_, name: string) =>
              v.param ?? (name === 'email' ? 'a@x.cz' : name === 'id' ? String(list) : '1'),
          )
          const qs = query
            .filter((q) => !v.only || v.only.test(q))
            .map((q) => `${q}=${v.query}`)
            .join('&')
          const res = await t.req(method.toUpperCase(), qs ? `${path}?${qs}` : path, {
            ...(schema ? { body: sample(schema, v.leaf) } : {}),
            ...(template.startsWith('/admin') ? { key: ADMIN_KEY } : {}),
          })
          sent++
          if (res.status >= 500) failures.push(`${method.toUpperCase()} ${path}: ${res.status} ${res.text}`)
        }
      }
    }
    // Every operation was reached (the document lists them all), and none failed.
    assert.ok(sent >= variants.length * 70, `only ${sent} requests`)
    assert.deepEqual(failures, [])
  })
})
