/**
 * Form bodies (`application/x-www-form-urlencoded`) as early PHP clients post them: `http_build_query($data)`
 * through curl. Each is read as the same data sent as JSON would be.
 */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { FORM_FIELDS_MAX, FORM_TYPE, parseFormText } from './form-body.js'
import { MAX_JSON_DEPTH } from './json-depth.js'

const enc = (s: string) => encodeURIComponent(s).replaceAll('%20', '+')

/** PHP's http_build_query: bracketed keys, `+` for a space, true "1", false "0", null and empty lists left out. */
function httpBuildQuery(data: Record<string, unknown>): string {
  const parts: string[] = []
  const walk = (key: string, v: unknown) => {
    if (v === null || v === undefined) return
    if (typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) walk(`${key}[${k}]`, x)
      return
    }
    parts.push(`${enc(key)}=${enc(v === true ? '1' : v === false ? '0' : String(v))}`)
  }
  for (const [k, v] of Object.entries(data)) walk(k, v)
  return parts.join('&')
}

describe('form-encoded request bodies', async () => {
  const t = await startTestApp({ worker: false })
  const list = (await t.req('POST', '/lists', { body: { name: 'Form' } })).body.id as number
  const post = (url: string, body: string, type = FORM_TYPE) =>
    t.req('POST', url, { body, headers: { 'content-type': type } })
  const member = async (email: string) =>
    (await t.req('GET', `/lists/${list}/subscriber/${email}`)).body.subscriber

  it('subscribes with the fields, tags and flags of the form, charset or not', async () => {
    const first =
      'subscriber_data%5Bemail%5D=a%40x.cz&subscriber_data%5Bname%5D=Jan&subscriber_data%5Btags%5D%5B0%5D=vip' +
      '&update_existing=1&resubscribe=0'
    const res = await post(`/lists/${list}/subscribe`, first, `${FORM_TYPE}; charset=UTF-8`)
    assert.equal(res.status, 200, res.text)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.equal(res.body.email, 'a@x.cz')
    assert.equal(res.body.already_subscribed, false)
    const stored = await member('a@x.cz')
    assert.equal(stored.name, 'Jan')
    assert.deepEqual(stored.tags, ['vip'])
    // update_existing "0" leaves the contact as it is; "1" writes the form's fields onto it.
    const kept = httpBuildQuery({
      subscriber_data: { email: 'a@x.cz', name: 'Kept' },
      update_existing: false,
    })
    assert.equal((await post(`/lists/${list}/subscribe`, kept)).status, 200)
    assert.equal((await member('a@x.cz')).name, 'Jan')
    const put = httpBuildQuery({
      subscriber_data: { email: 'a@x.cz', name: 'Jan Nový' },
      update_existing: true,
    })
    assert.equal((await post(`/lists/${list}/subscribe`, put)).body.already_subscribed, true)
    assert.equal((await member('a@x.cz')).name, 'Jan Nový')
  })

  it('subscribes a bulk of entries', async () => {
    const body = httpBuildQuery({
      subscriber_data: [
        { email: 'b1@x.cz', name: 'Bára', tags: ['x', 'y'], custom_fields: { size: 'M' } },
        { email: 'b2@x.cz', status: 2 },
        { email: 'b3@x.cz', surname: 'Černá' },
      ],
      update_existing: true,
      trigger_autoresponders: false,
    })
    const res = await post(`/lists/${list}/subscribe-bulk`, body)
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body, { inserts: 3 })
    const b1 = await member('b1@x.cz')
    assert.deepEqual([b1.name, b1.tags, b1.custom_fields], ['Bára', ['x', 'y'], { size: 'M' }])
    assert.equal((await member('b2@x.cz')).status, 2)
    assert.equal((await member('b3@x.cz')).surname, 'Černá')
  })

  it('reads lists of objects holding lists as JSON does (a purchase and its items)', async () => {
    const order = (id: string) => ({
      transaction: { order_id: id, email: 'a@x.cz', shop: 'shop.cz', amount: 12.5, props: { coupon: 'X' } },
      transaction_items: [
        { code: 'A1', title: 'Boty', price: 10, amount: 1, categories: ['Shoes', 'Men'] },
        { code: 'B2', price: '2.50', amount: 1, tags: ['sale'] },
      ],
    })
    const json = await t.req('POST', '/tracker/transaction', { body: order('json-1') })
    const res = await post('/tracker/transaction', httpBuildQuery(order('form-1')))
    assert.equal(res.status, 200, res.text)
    const same = (b: Record<string, unknown>) => ({
      ...b,
      id: 0,
      order_id: '',
      timestamp: '',
      items: undefined,
    })
    assert.deepEqual(same(res.body), same(json.body))
    const items = (b: { items: object[] }) => b.items.map((i) => ({ ...i, order_id: '' }))
    assert.deepEqual(items(res.body), items(json.body))
  })

  it('drops __proto__ and other prototype keys, polluting nothing', async () => {
    const res = await post(
      '/lists',
      '__proto__%5Bpolluted%5D=1&name=Proto&constructor%5Bprototype%5D%5Bx%5D=1',
    )
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.name, 'Proto')
    assert.equal(({} as Record<string, unknown>).polluted, undefined)
    assert.equal(({} as Record<string, unknown>).x, undefined)
    assert.deepEqual(parseFormText('a[__proto__][b]=1&a[c]=2'), { value: { a: { c: '2' } } })
    // Keys that only name a member of Object.prototype are data, as in JSON: kept, as own properties.
    assert.deepEqual(parseFormText('a[toString]=1&a[constructor]=2&hasOwnProperty=3'), {
      value: { a: { toString: '1', constructor: '2' }, hasOwnProperty: '3' },
    })
  })

  it('refuses a body nested too deeply with the 400 of a JSON body', async () => {
    const levels = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`
    const tooDeepJson = await t.req('POST', '/lists', {
      body: `{"name":"Deep","custom_fields":${levels(MAX_JSON_DEPTH)}}`,
    })
    assert.equal(tooDeepJson.status, 400)
    // The body is a level and each bracket one more: 64 are 65 levels (found once parsed), 70 pass qs's depth.
    for (const brackets of [MAX_JSON_DEPTH, 70]) {
      const res = await post('/lists', `name=Deep&custom_fields${'[0]'.repeat(brackets)}=1`)
      assert.equal(res.status, 400)
      assert.deepEqual(res.body, tooDeepJson.body)
    }
    const within = await post('/lists', `name=Deep&custom_fields${'[0]'.repeat(MAX_JSON_DEPTH - 1)}=1`)
    assert.deepEqual([within.status, Object.keys(within.body.errors)], [422, ['custom_fields']]) // not a map
  })

  it('answers a wrong value with the 422 field errors JSON gets', async () => {
    const data = { subscriber_data: { email: 'c@x.cz', rating: 'abc' }, resubscribe: 'maybe' }
    const json = await t.req('POST', `/lists/${list}/subscribe`, { body: data })
    const res = await post(`/lists/${list}/subscribe`, httpBuildQuery(data))
    assert.equal(res.status, 422)
    assert.deepEqual(Object.keys(res.body.errors).sort(), ['resubscribe', 'subscriber_data.rating'])
    assert.deepEqual(res.body, json.body)
    const nul = await post(
      `/lists/${list}/subscribe`,
      'subscriber_data[email]=c%40x.cz&subscriber_data[name]=a%00b',
    )
    assert.equal(nul.status, 422)
    assert.deepEqual(Object.keys(nul.body.errors), ['subscriber_data.name'])
  })

  it('reads an empty body as none, and refuses one of too many fields', async () => {
    const empty = await post('/lists', '')
    const emptyJson = await post('/lists', '', 'application/json')
    assert.equal(empty.status, 422)
    assert.deepEqual(empty.body, emptyJson.body)
    const tooMany = await post('/lists', `name=Many${'&x'.repeat(FORM_FIELDS_MAX)}`)
    assert.equal(tooMany.status, 400)
    assert.equal(typeof tooMany.body.message, 'string')
  })

  it('reads as PHP writes: + is a space, no UTF-8 is U+FFFD, the last repeat wins, lists as json_encode', () => {
    const text = 'a=Jan+Nov%C3%A1k&b=%ED%A0%80!&c=1&c=2&l[1]=y&l[0]=x&g[0]=x&g[5]=y&e[]=p&e[]=q&m[0]=x&m[k]=y'
    assert.deepEqual(parseFormText(text), {
      value: {
        a: 'Jan Novák',
        b: '\ufffd\ufffd\ufffd!',
        c: '2',
        l: ['x', 'y'],
        g: { 0: 'x', 5: 'y' },
        e: ['p', 'q'],
        m: { 0: 'x', k: 'y' },
      },
    })
  })
})
