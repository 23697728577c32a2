import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { queryRows } from '../../core/db/sql.js'
import { findSegments, segmentMembersSql } from './index.js'

const NOW = new Date('2026-03-01T12:00:00Z')

describe('segments of a list', async () => {
  const clock = new ManualClock(NOW)
  const t = await startTestApp({ clock, worker: false })
  const other = await t.createAccount()

  async function newList(key?: string): Promise<number> {
    const res = await t.req('POST', '/lists', { body: { name: 'L' }, ...(key ? { key } : {}) })
    return res.body.id as number
  }
  async function subscribe(listId: number, entries: unknown[]) {
    const res = await t.req('POST', `/lists/${listId}/subscribe-bulk`, { body: { subscriber_data: entries } })
    assert.equal(res.status, 200)
  }
  const create = (listId: number, body: unknown, key?: string) =>
    t.req('POST', `/lists/${listId}/segments`, { body, ...(key ? { key } : {}) })

  it('creates a segment and lists it with its live subscriber count', async () => {
    const list = await newList()
    await subscribe(list, [
      { email: 'p1@x.cz', city: 'Praha' },
      { email: 'p2@x.cz', city: 'praha' },
      { email: 'b@x.cz', city: 'Brno' },
      { email: 'gone@x.cz', city: 'Praha', status: 2 },
    ])
    const res = await create(list, {
      name: ' Prague ',
      filter: { all: [{ field: 'City', op: 'contains', value: 'PRAHA' }] },
    })
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.match(res.body.id, /^[0-9a-f]{12}$/)
    assert.deepEqual(res.body, {
      id: res.body.id,
      name: 'Prague',
      list_id: list,
      filter: { all: [{ field: 'city', op: 'contains', value: 'PRAHA' }] },
      subscribers: 2,
      created_at: '2026-03-01 12:00:00',
    })

    clock.advance(1000)
    const second = await create(list, { name: 'Brno', filter: { field: 'city', op: 'eq', value: 'Brno' } })
    assert.equal(second.status, 200)
    assert.notEqual(second.body.id, res.body.id)

    // The count is of now: a new subscriber in Prague shows at once.
    await subscribe(list, [{ email: 'p3@x.cz', city: 'Praha 4' }])
    const all = await t.req('GET', `/lists/${list}/segments`)
    assert.equal(all.status, 200)
    assert.deepEqual(
      all.body.map((s: { id: string; name: string; subscribers: number; created_at: string }) => [
        s.id,
        s.name,
        s.subscribers,
        s.created_at,
      ]),
      [
        [res.body.id, 'Prague', 3, '2026-03-01 12:00:00'],
        [second.body.id, 'Brno', 1, '2026-03-01 12:00:01'],
      ],
    )
    // The list's detail shows the same segments.
    const detail = await t.req('GET', `/lists/${list}`)
    assert.equal(detail.status, 200)
    assert.deepEqual(detail.body.list.segments, all.body)
  })

  it('counts many segments of one list (counted in groups)', async () => {
    const list = await newList()
    await subscribe(
      list,
      Array.from({ length: 12 }, (_, i) => ({
        email: `m${i}@x.cz`,
        tags: Array.from({ length: i + 1 }, (_, j) => `t${j}`),
      })),
    )
    for (let i = 0; i < 12; i++) {
      clock.advance(1000)
      assert.equal((await create(list, { name: `t${i}`, filter: { tag: `t${i}` } })).status, 200)
    }
    const all = await t.req('GET', `/lists/${list}/segments`)
    assert.deepEqual(
      all.body.map((s: { name: string; subscribers: number }) => [s.name, s.subscribers]),
      Array.from({ length: 12 }, (_, i) => [`t${i}`, 12 - i]),
    )
  })

  it('answers an empty array for a list without segments', async () => {
    const list = await newList()
    const res = await t.req('GET', `/lists/${list}/segments`)
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, [])
    assert.deepEqual((await t.req('GET', `/lists/${list}`)).body.list.segments, [])
  })

  it('requires a name and a filter', async () => {
    const list = await newList()
    let res = await create(list, {})
    assert.equal(res.status, 422)
    assert.deepEqual(Object.keys(res.body.errors).sort(), ['filter', 'name'])
    assert.deepEqual(res.body.errors.name, ['The name field is required.'])
    res = await create(list, { name: '   ', filter: { tag: 'a' } })
    assert.equal(res.status, 422)
    assert.deepEqual(res.body.errors, { name: ['The name field is required.'] })
    res = await create(list, { name: 'x', filter: null })
    assert.deepEqual(res.body.errors, { filter: ['The filter field is required.'] })
    res = await create(list, { name: 'x'.repeat(256), filter: { tag: 'a' } })
    assert.equal(res.status, 422)
    assert.ok(res.body.errors.name)
  })

  it('names each bad part of the filter by its path', async () => {
    const list = await newList()
    const res = await create(list, {
      name: 'Bad',
      filter: {
        all: [{ field: 'city', op: 'like', value: 'x' }, { any: [{ tag: '' }] }, { purchased: { days: 0 } }],
      },
    })
    assert.equal(res.status, 422)
    assert.deepEqual(res.body, {
      errors: {
        'filter.all.0.op': ['The selected op is invalid.'],
        'filter.all.1.any.0.tag': ['The tag field is required.'],
        'filter.all.2.purchased.days': ['The days must be at least 1.'],
      },
    })
    const none = await t.req('GET', `/lists/${list}/segments`)
    assert.deepEqual(none.body, [], 'nothing was stored')
  })

  it('counts members with a tracker event (event conditions)', async () => {
    const list = await newList()
    await subscribe(list, [{ email: 'v1@x.cz' }, { email: 'v2@x.cz' }, { email: 'v3@x.cz', tags: ['a'] }])
    for (const [email, action] of [
      ['v1@x.cz', 'view'],
      ['v2@x.cz', 'buy'],
    ]) {
      const res = await t.req('POST', '/tracker/events', {
        body: { event: { email, category: 'shop', action } },
      })
      assert.equal(res.status, 200)
    }
    const res = await create(list, {
      name: 'Viewers',
      filter: { any: [{ tag: 'a' }, { event: { category: 'shop', action: 'view' } }] },
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.subscribers, 2)
  })

  it("refuses in_list naming a missing list or another account's list", async () => {
    const list = await newList()
    const mine = await newList()
    const theirs = await newList(other.key)
    const ok = await create(list, { name: 'Both', filter: { in_list: mine } })
    assert.equal(ok.status, 200)
    const res = await create(list, {
      name: 'Theirs',
      filter: { all: [{ in_list: theirs }, { not: { in_list: 999999 } }] },
    })
    assert.equal(res.status, 422)
    assert.deepEqual(res.body.errors, {
      'filter.all.0.in_list': ['The selected in_list is invalid.'],
      'filter.all.1.not.in_list': ['The selected in_list is invalid.'],
    })
  })

  it('answers 404 for a non-numeric list id', async () => {
    const res = await t.req('GET', '/lists/abc/segments')
    assert.equal(res.status, 404)
    assert.deepEqual(res.body, { message: 'Not Found' })
  })

  it("answers 404 for a missing list and another account's list alike", async () => {
    const list = await newList()
    const made = await create(list, { name: 'Mine', filter: { tag: 'a' } })
    assert.equal(made.status, 200)
    for (const [method, body] of [
      ['GET', undefined],
      ['POST', { name: 'x', filter: { tag: 'a' } }],
    ] as const) {
      const theirs = await t.req(method, `/lists/${list}/segments`, { key: other.key, body })
      const missing = await t.req(method, '/lists/999999/segments', { body })
      assert.equal(theirs.status, 404)
      assert.equal(missing.status, 404)
      assert.deepEqual(theirs.body, missing.body)
      assert.deepEqual(theirs.body, { message: 'List not found' })
    }
    // Their invalid filter still answers 404, never revealing whether the list exists.
    const bad = await create(list, { name: 'x', filter: { tag: '' } }, other.key)
    assert.equal(bad.status, 404)
    // Nothing was added to our list by their attempts.
    const mineNow = await t.req('GET', `/lists/${list}/segments`)
    assert.equal(mineNow.body.length, 1)
  })

  it('needs a key', async () => {
    const list = await newList()
    const res = await t.req('GET', `/lists/${list}/segments`, { key: null })
    assert.equal(res.status, 401)
    assert.deepEqual(res.body, { message: 'Unauthorized' })
  })

  it('findSegments returns own segments in the order asked, and segmentMembersSql their members', async () => {
    const list = await newList()
    await subscribe(list, [
      { email: 'v@x.cz', tags: ['vip'] },
      { email: 'n@x.cz', tags: ['new'] },
    ])
    const vip = (await create(list, { name: 'VIP', filter: { tag: 'vip' } })).body.id as string
    const fresh = (await create(list, { name: 'New', filter: { tag: 'new' } })).body.id as string
    const theirList = await newList(other.key)
    const theirs = (await create(theirList, { name: 'T', filter: { tag: 'vip' } }, other.key)).body
      .id as string

    const found = await findSegments(t.ctx.db, t.account.id, [fresh, theirs, 'nope', vip, fresh])
    assert.deepEqual(found, [
      { id: fresh, listId: list, filter: { tag: 'new' } },
      { id: vip, listId: list, filter: { tag: 'vip' } },
    ])
    assert.deepEqual(await findSegments(t.ctx.db, t.account.id, []), [])

    const members = async (cond: (typeof found)[number]) => {
      const rows = await queryRows<{ email: string }>(
        t.ctx.db,
        sql`SELECT email FROM contacts
            WHERE id IN (${segmentMembersSql(t.account.id, cond.listId, cond.filter, NOW)})`,
      )
      return rows.map((r) => r.email)
    }
    assert.deepEqual(await members(found[0]!), ['n@x.cz'])
    assert.deepEqual(await members(found[1]!), ['v@x.cz'])
  })

  it('is documented in /openapi.json', async () => {
    const res = await t.req('GET', '/openapi.json', { key: null })
    assert.equal(res.status, 200)
    assert.ok(res.body.paths['/lists/{id}/segments']?.post)
    assert.ok(res.body.paths['/lists/{id}/segments']?.get)
  })
})
