import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { subscriberRows } from '../../../test/helpers/subscriber-rows.js'

describe('search', async () => {
  const t = await startTestApp({ worker: false })
  const rows = subscriberRows(t.ctx.db)
  const me = t.account.id
  const other = await t.createAccount()

  const news = await rows.list(me, 'News')
  const shop = await rows.list(me, 'Shop')
  const anna = await rows.contact(me, {
    email: 'anna.svobodova@shop.cz',
    name: 'Anna',
    surname: 'Svobodová',
    phone: '+420 601 111 222',
    tags: ['vip'],
    insertedAt: '2026-01-02 03:04:05.678+00',
  })
  const annaNews = await rows.join(anna, news, { subscribedAt: '2026-01-03 04:05:06.789+00' })
  const annaShop = await rows.join(anna, shop, { status: 2, source: 'import' })
  const petr = await rows.contact(me, { email: 'petr@annex.cz', name: 'Petr', surname: 'Annanas' })
  const annette = await rows.contact(me, { email: 'x1@shop.cz', name: 'ANNETTE' })
  const sveda = await rows.contact(me, { email: 'x2@shop.cz', surname: 'Švédová' })
  const percent = await rows.contact(me, { email: 'x3@shop.cz', name: '50% off' })
  const fifty = await rows.contact(me, { email: 'x4@shop.cz', name: '500 club' })
  const underscore = await rows.contact(me, { email: 'a_b@shop.cz' })
  await rows.contact(me, { email: 'axb@shop.cz' })
  const backslash = await rows.contact(me, { email: 'x5@shop.cz', name: 'back\\slash' })
  await rows.contact(me, { email: 'x6@shop.cz', name: 'backxslash' })
  const paged: number[] = []
  for (let i = 0; i < 25; i++) paged.push((await rows.contact(me, { email: `page${i}@paging.cz` })).id)
  const theirAnna = await rows.contact(other.id, {
    email: 'anna.other@shop.cz',
    name: 'Anna',
    phone: '+420 601',
  })

  const ids = (res: { body: { data: { id: number }[] } }) => res.body.data.map((s) => s.id)

  it('finds by the start of email, name, surname or phone, any case, with the global shape', async () => {
    const res = await t.req('GET', '/search?query=ann')
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.deepEqual(ids(res), [anna.id, petr.id, annette.id])
    assert.equal(res.body.total, 3)
    assert.deepEqual(res.body.data[0], {
      id: anna.id,
      name: 'Anna',
      surname: 'Svobodová',
      email: 'anna.svobodova@shop.cz',
      gender: '',
      company: null,
      city: '',
      country: '',
      phone: '+420 601 111 222',
      vokativ: '',
      vokativ_s: '',
      bounce_soft: 0,
      bounced_hard: 0,
      bounce_message: null,
      inserted_at: '2026-01-02 03:04:05',
      rating: 0,
      tags: ['vip'],
      custom_fields: {},
      lists: {
        [String(news)]: {
          id: annaNews.id,
          list_id: news,
          email: 'anna.svobodova@shop.cz',
          status: 1,
          subscribed_at: '2026-01-03T04:05:06.789000Z',
          source: 'api',
          groups: {},
        },
        [String(shop)]: {
          id: annaShop.id,
          list_id: shop,
          email: 'anna.svobodova@shop.cz',
          status: 2,
          subscribed_at: annaShop.subscribedAt.toISOString().replace(/Z$/, '000Z'),
          source: 'import',
          groups: {},
        },
      },
    })
    assert.deepEqual(res.body.data[1].lists, {})
    assert.deepEqual(ids(await t.req('GET', '/search?query=ANN')), [anna.id, petr.id, annette.id])
    assert.deepEqual(ids(await t.req('GET', '/search?query=Anna.Svobodova%40')), [anna.id])
    assert.deepEqual(ids(await t.req('GET', '/search?query=annan')), [petr.id])
    assert.deepEqual(ids(await t.req('GET', '/search?query=%C5%A0v%C3%A9d')), [sveda.id])
    assert.deepEqual(ids(await t.req('GET', '/search?query=%2B420%20601')), [anna.id])
    assert.deepEqual(ids(await t.req('GET', '/search?query=nna')), [])
  })

  it('answers POST /search {query} as GET /search?query=', async () => {
    const get = await t.req('GET', '/search?query=ann')
    const post = await t.req('POST', '/search', { body: { query: 'ann' } })
    assert.equal(post.status, 200)
    assert.deepEqual(post.body, get.body)
    const paging = await t.req('POST', '/search', { body: { query: 'page', page: 2, per_page: 10 } })
    assert.deepEqual(ids(paging), paged.slice(10, 20))
  })

  it('takes %, _ and \\ in the query literally', async () => {
    assert.deepEqual(ids(await t.req('GET', '/search?query=50%25')), [percent.id])
    assert.deepEqual(ids(await t.req('GET', '/search?query=50')), [percent.id, fifty.id])
    assert.deepEqual(ids(await t.req('GET', '/search?query=a_b')), [underscore.id])
    assert.deepEqual(ids(await t.req('GET', '/search?query=back%5C')), [backslash.id])
    assert.deepEqual((await t.req('GET', '/search?query=%25')).body, { data: [], total: 0 })
    assert.deepEqual((await t.req('GET', '/search?query=_')).body, { data: [], total: 0 })
  })

  it('pages by id and counts every match', async () => {
    const first = await t.req('GET', '/search?query=page')
    assert.deepEqual(ids(first), paged.slice(0, 20))
    assert.equal(first.body.total, 25)
    const third = await t.req('GET', '/search?query=page&per_page=10&page=3')
    assert.deepEqual([ids(third), third.body.total], [paged.slice(20), 25])
    const beyond = await t.req('GET', '/search?query=page&page=9')
    assert.deepEqual(beyond.body, { data: [], total: 25 })
    assert.equal((await t.req('GET', '/search?query=page&per_page=100')).status, 200)
    const tooMany = await t.req('GET', '/search?query=page&per_page=101')
    assert.deepEqual(
      [tooMany.status, tooMany.body],
      [422, { errors: { per_page: ['The per_page must not be greater than 100.'] } }],
    )
    assert.deepEqual(Object.keys((await t.req('GET', '/search?query=page&page=x')).body.errors), ['page'])
    assert.equal((await t.req('GET', '/search?query=page&page=0')).status, 200)
  })

  it('answers 422 on query when it is missing or blank', async () => {
    const required = { errors: { query: ['The query field is required.'] } }
    for (const [method, url, body] of [
      ['GET', '/search', undefined],
      ['GET', '/search?', undefined],
      ['GET', '/search?query=', undefined],
      ['GET', '/search?query=%20%20', undefined],
      ['POST', '/search', {}],
      ['POST', '/search', { query: '' }],
      ['POST', '/search', { query: ' ' }],
    ] as const) {
      const res = await t.req(method, url, { body })
      assert.equal(res.status, 422, `${method} ${url} ${JSON.stringify(body)}`)
      assert.deepEqual(res.body, required, `${method} ${url} ${JSON.stringify(body)}`)
    }
  })

  it("never shows another account's people", async () => {
    const mine = await t.req('GET', '/search?query=anna')
    assert.deepEqual(ids(mine), [anna.id, petr.id])
    assert.deepEqual(ids(await t.req('GET', '/search?query=%2B420%20601')), [anna.id])
    const theirs = await t.req('POST', '/search', { key: other.key, body: { query: 'anna' } })
    assert.deepEqual(theirs.body, {
      data: [{ ...theirs.body.data[0], id: theirAnna.id, lists: {} }],
      total: 1,
    })
    const stranger = await t.createAccount()
    assert.deepEqual((await t.req('GET', '/search?query=a', { key: stranger.key })).body, {
      data: [],
      total: 0,
    })
  })

  it('needs a key', async () => {
    const res = await t.req('GET', '/search?query=ann', { key: null })
    assert.deepEqual([res.status, res.body], [401, { message: 'Unauthorized' }])
    assert.equal((await t.req('POST', '/search', { key: null, body: { query: 'ann' } })).status, 401)
  })
})
