import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { asc, eq } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { subscriberRows } from '../../../test/helpers/subscriber-rows.js'
import { contacts, memberships } from './subscribers.table.js'
import { toListPageEntry } from './subscribers.schemas.js'
import { events } from '../events/index.js'
import { messages } from '../messages/index.js'

const ISO_MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/

describe('subscriber reads', async () => {
  const t = await startTestApp({ worker: false })
  const rows = subscriberRows(t.ctx.db)
  const me = t.account.id
  const other = await t.createAccount()
  const stranger = await t.createAccount()

  // One list with every status, a second list, and another account's list holding the same address.
  const listId = await rows.list(me, 'Main')
  const secondList = await rows.list(me, 'Second')
  const theirList = await rows.list(other.id, 'Theirs')

  const jan = await rows.contact(me, {
    email: 'jan.novak+news@shop.cz',
    name: 'Jan',
    surname: 'Novák "Honza"',
    gender: 'male',
    city: 'Praha',
    country: 'CZ',
    phone: '+420 777 123 456',
    birthday: '1990-05-01',
    tags: ['vip', 'škola'],
    rating: 4.5,
    customFields: { order_count: 3, note: { value: 'ünïcode "quoted"', type: 'string' } },
    groups: { interests: ['shoes', 'bags'] },
    insertedAt: '2025-12-31 23:59:58.987654+00',
  })
  const janMain = await rows.join(jan, listId, {
    source: 'form',
    subscribedAt: '2026-01-02 03:04:05.123456+00',
  })
  const janSecond = await rows.join(jan, secondList, {
    status: 2,
    subscribedAt: '2025-06-01 10:00:00+00',
    unsubscribedAt: '2025-07-01 11:30:00.5+00',
  })
  const subscribed = [jan]
  for (let i = 1; i <= 24; i++) {
    const c = await rows.contact(me, {
      email: `person${i}@shop.cz`,
      // Text the JSON writer must escape: quotes, backslashes, control and line-separator characters.
      name: i === 1 ? 'Tab\t "q" \\ \u2028 \u0001 end' : `P${i}`,
      company: `Co ${i}`,
      customFields: i === 1 ? { 'key "x"\n': ['a\\b', { deep: null }], big: 12345678.5 } : {},
    })
    await rows.join(c, listId)
    subscribed.push(c)
  }
  const byStatus: Record<number, string> = {}
  for (const [status, email] of [
    [2, 'gone@shop.cz'],
    [4, 'bounced@shop.cz'],
    [5, 'complained@shop.cz'],
    [6, 'pending@shop.cz'],
  ] as const) {
    const c = await rows.contact(me, { email })
    await rows.join(c, listId, { status, unsubscribedAt: status === 2 ? '2026-02-03 04:05:06+00' : null })
    byStatus[status] = email
  }
  const theirJan = await rows.contact(other.id, { email: jan.email, name: 'Not yours' })
  await rows.join(theirJan, theirList)

  const janDetail = {
    id: jan.id,
    name: 'Jan',
    surname: 'Novák "Honza"',
    email: 'jan.novak+news@shop.cz',
    company: '',
    city: 'Praha',
    street: '',
    zip: '',
    country: 'CZ',
    phone: '+420 777 123 456',
    gender: 'male',
    pretitle: '',
    surtitle: '',
    birthday: '1990-05-01',
    nameday: null,
    vokativ: '',
    vokativ_s: '',
    tags: ['vip', 'škola'],
    rating: 4.5,
    inserted_at: '2025-12-31 23:59:58',
    list_id: listId,
    status: 1,
    source: 'form',
    subscribed_at: '2026-01-02T03:04:05.123000Z',
    unsubscribed_at: null,
    custom_fields: { order_count: 3, note: { value: 'ünïcode "quoted"', type: 'string' } },
    groups: { interests: ['shoes', 'bags'] },
    bounce_soft: 0,
    bounced_hard: 0,
    bounce_message: null,
  }

  describe('GET /lists/{id}/subscribers', () => {
    it('pages the subscribed members in membership order with the envelope', async () => {
      const first = await t.req('GET', `/lists/${listId}/subscribers`)
      assert.equal(first.status, 200)
      assert.equal(first.headers['content-type'], 'application/json')
      assert.deepEqual(
        { ...first.body, data: first.body.data.length },
        {
          current_page: 1,
          data: 20,
          per_page: 20,
          total: 25,
          last_page: 2,
          next_page_url: `${t.ctx.config.publicUrl}/lists/${listId}/subscribers?page=2&per_page=20`,
        },
      )
      assert.deepEqual(
        first.body.data.map((e: { email: string }) => e.email),
        subscribed.slice(0, 20).map((c) => c.email),
      )
      assert.deepEqual(first.body.data[0], {
        id: janMain.id,
        list_id: listId,
        email: 'jan.novak+news@shop.cz',
        status: 1,
        subscribed_at: '2026-01-02T03:04:05.123000Z',
        unsubscribed_at: null,
        custom_fields: { order_count: 3, note: { value: 'ünïcode "quoted"', type: 'string' } },
        groups: { interests: ['shoes', 'bags'] },
        source: 'form',
        subscriber: {
          id: jan.id,
          name: 'Jan',
          surname: 'Novák "Honza"',
          email: 'jan.novak+news@shop.cz',
          gender: 'male',
          company: null,
          city: 'Praha',
          country: 'CZ',
          phone: '+420 777 123 456',
        },
      })
      // A client that counts pages from 0 gets the first page.
      for (const page of ['0', '-1'])
        assert.deepEqual(
          (await t.req('GET', `/lists/${listId}/subscribers?page=${page}`)).body,
          first.body,
          page,
        )
      const second = await t.req('GET', `/lists/${listId}/subscribers?page=2`)
      assert.deepEqual(
        second.body.data.map((e: { email: string }) => e.email),
        subscribed.slice(20).map((c) => c.email),
      )
      assert.equal(second.body.current_page, 2)
      assert.equal(second.body.next_page_url, null)
      const beyond = await t.req('GET', `/lists/${listId}/subscribers?page=3&per_page=20`)
      assert.deepEqual(beyond.body, {
        current_page: 3,
        data: [],
        per_page: 20,
        total: 25,
        last_page: 2,
        next_page_url: null,
      })
      const small = await t.req('GET', `/lists/${listId}/subscribers?per_page=7&page=4`)
      assert.deepEqual(
        { ...small.body, data: small.body.data.map((e: { email: string }) => e.email) },
        {
          current_page: 4,
          data: subscribed.slice(21, 28).map((c) => c.email),
          per_page: 7,
          total: 25,
          last_page: 4,
          next_page_url: null,
        },
      )
    })

    it('writes every entry exactly as toListPageEntry would', async () => {
      const res = await t.req('GET', `/lists/${listId}/subscribers?per_page=5000`)
      const joined = await t.ctx.db
        .select({ c: contacts, m: memberships })
        .from(memberships)
        .innerJoin(contacts, eq(contacts.id, memberships.contactId))
        .where(eq(memberships.listId, listId))
        .orderBy(asc(memberships.id))
      const expected = joined.filter((r) => r.m.status === 1).map((r) => toListPageEntry(r.c, r.m))
      assert.equal(expected.length, 25)
      assert.deepEqual(res.body.data, JSON.parse(JSON.stringify(expected)))
    })

    it('filters by status name', async () => {
      const cases = [
        ['subscribed', 1, 25],
        ['unsubscribed', 2, 1],
        ['not_confirmed', 6, 1],
        ['bounced', 4, 1],
        ['complained', 5, 1],
        ['', 1, 25],
      ] as const
      for (const [name, code, total] of cases) {
        const res = await t.req('GET', `/lists/${listId}/subscribers?status=${name}&per_page=100`)
        assert.equal(res.status, 200, name)
        assert.equal(res.body.total, total, name)
        assert.ok(
          res.body.data.every((e: { status: number }) => e.status === code),
          name,
        )
        if (code !== 1) assert.equal(res.body.data[0].email, byStatus[code])
      }
      const gone = await t.req('GET', `/lists/${listId}/subscribers?status=unsubscribed`)
      assert.equal(gone.body.data[0].unsubscribed_at, '2026-02-03T04:05:06.000000Z')
      assert.match(gone.body.data[0].subscribed_at, ISO_MICRO)
    })

    it('rejects an unknown status and out-of-range paging with field errors', async () => {
      const bad = await t.req('GET', `/lists/${listId}/subscribers?status=deleted`)
      assert.equal(bad.status, 422)
      assert.deepEqual(bad.body, { errors: { status: ['The selected status is invalid.'] } })
      for (const [query, field] of [
        ['per_page=0', 'per_page'],
        ['per_page=5001', 'per_page'],
        ['per_page=abc', 'per_page'],
        ['page=abc', 'page'],
      ]) {
        const res = await t.req('GET', `/lists/${listId}/subscribers?${query}`)
        assert.equal(res.status, 422, query)
        assert.deepEqual(Object.keys(res.body.errors), [field], query)
      }
      assert.deepEqual((await t.req('GET', `/lists/${listId}/subscribers?per_page=5001`)).body, {
        errors: { per_page: ['The per_page must not be greater than 5000.'] },
      })
      assert.equal((await t.req('GET', `/lists/${listId}/subscribers?per_page=5000`)).status, 200)
    })

    it("answers 404 {message} for a missing list and another account's list alike", async () => {
      const missing = await t.req('GET', '/lists/999999/subscribers')
      assert.equal(missing.status, 404)
      assert.deepEqual(missing.body, { message: 'List not found' })
      const theirs = await t.req('GET', `/lists/${listId}/subscribers`, { key: other.key })
      assert.equal(theirs.status, 404)
      assert.deepEqual(theirs.body, missing.body)
      const own = await t.req('GET', `/lists/${theirList}/subscribers`, { key: other.key })
      assert.deepEqual(
        own.body.data.map((e: { subscriber: { name: string } }) => e.subscriber.name),
        ['Not yours'],
      )
    })

    it('needs a key', async () => {
      const res = await t.req('GET', `/lists/${listId}/subscribers`, { key: null })
      assert.equal(res.status, 401)
      assert.deepEqual(res.body, { message: 'Unauthorized' })
    })
  })

  describe('GET /lists/{id}/subscriber/{email}', () => {
    it('returns the subscriber detail; + stays +, in any case and with %2B', async () => {
      for (const path of ['jan.novak+news@shop.cz', 'jan.novak%2Bnews@shop.cz', 'Jan.Novak+News@SHOP.cz']) {
        const res = await t.req('GET', `/lists/${listId}/subscriber/${path}`)
        assert.equal(res.status, 200, path)
        assert.equal(res.headers['content-type'], 'application/json')
        assert.deepEqual(res.body, { subscriber: janDetail }, path)
      }
      const spaced = await t.req('GET', `/lists/${listId}/subscriber/%20jan.novak%2Bnews@shop.cz%20`)
      assert.equal(spaced.status, 200)
      const unsubscribed = await t.req('GET', `/lists/${secondList}/subscriber/jan.novak+news@shop.cz`)
      assert.equal(unsubscribed.body.subscriber.status, 2)
      assert.equal(unsubscribed.body.subscriber.list_id, secondList)
      assert.equal(unsubscribed.body.subscriber.unsubscribed_at, '2025-07-01T11:30:00.500000Z')
      assert.equal(unsubscribed.body.subscriber.subscribed_at, '2025-06-01T10:00:00.000000Z')
    })

    it('answers 404 {errors:[...]} for an address not in the list', async () => {
      for (const email of ['nobody@shop.cz', 'jan.novak news@shop.cz', 'person1@shop.cz']) {
        const res = await t.req('GET', `/lists/${secondList}/subscriber/${encodeURIComponent(email)}`)
        assert.equal(res.status, 404, email)
        assert.deepEqual(res.body, { errors: ['Subscriber not found in this list'] })
      }
    })

    it("answers 404 {message} for a missing list and another account's list alike", async () => {
      const missing = await t.req('GET', '/lists/999999/subscriber/jan.novak+news@shop.cz')
      assert.deepEqual([missing.status, missing.body], [404, { message: 'List not found' }])
      const theirs = await t.req('GET', `/lists/${listId}/subscriber/jan.novak+news@shop.cz`, {
        key: other.key,
      })
      assert.deepEqual([theirs.status, theirs.body], [404, { message: 'List not found' }])
      const own = await t.req('GET', `/lists/${theirList}/subscriber/jan.novak+news@shop.cz`, {
        key: other.key,
      })
      assert.equal(own.body.subscriber.name, 'Not yours')
      assert.equal((await t.req('GET', `/lists/${listId}/subscriber/a@b.cz`, { key: null })).status, 401)
    })

    it('answers each of many concurrent lookups (one batch) as it would alone', async () => {
      const asks = [
        { key: undefined, path: `/lists/${listId}/subscriber/jan.novak+news@shop.cz` },
        { key: undefined, path: `/lists/${secondList}/subscriber/nobody@shop.cz` },
        { key: undefined, path: '/lists/999999/subscriber/jan.novak+news@shop.cz' },
        { key: other.key, path: `/lists/${listId}/subscriber/jan.novak+news@shop.cz` },
        { key: other.key, path: `/lists/${theirList}/subscriber/JAN.NOVAK+news@shop.cz` },
      ]
      const alone = []
      for (const a of asks) alone.push(await t.req('GET', a.path, a.key ? { key: a.key } : {}))
      const together = await Promise.all(
        [...asks, ...asks].map((a) => t.req('GET', a.path, a.key ? { key: a.key } : {})),
      )
      const shape = (r: { status: number; body: unknown }) => [r.status, r.body]
      assert.deepEqual(together.map(shape), [...alone, ...alone].map(shape))
      assert.deepEqual(
        alone.map((r) => r.status),
        [200, 404, 404, 404, 200],
      )
    })
  })

  describe('GET /lists/{id}/subscriber-by-phone/{phone}', () => {
    it('finds by phone ignoring spaces, the lowest contact id first', async () => {
      for (const phone of ['+420777123456', '%2B420%20777%20123%20456', '+420 777123 456']) {
        const res = await t.req('GET', `/lists/${listId}/subscriber-by-phone/${phone}`)
        assert.equal(res.status, 200, phone)
        assert.deepEqual(res.body, { subscriber: janDetail }, phone)
      }
      const twin = await rows.contact(me, { email: 'twin@shop.cz', phone: '+420777123456' })
      await rows.join(twin, secondList)
      await rows.join(twin, listId)
      const inMain = await t.req('GET', `/lists/${listId}/subscriber-by-phone/+420777123456`)
      assert.equal(inMain.body.subscriber.id, jan.id)
      const inSecond = await t.req('GET', `/lists/${secondList}/subscriber-by-phone/+420777123456`)
      assert.equal(inSecond.body.subscriber.id, jan.id)
      assert.equal(inSecond.body.subscriber.status, 2)
    })

    it('answers 404 {errors} when no member has the phone, 404 {message} for a foreign list', async () => {
      const lonely = await rows.contact(me, { email: 'lonely@shop.cz', phone: '+420 600 000 001' })
      await rows.join(lonely, secondList)
      for (const phone of ['+420600000001', '123', '%20']) {
        const res = await t.req('GET', `/lists/${listId}/subscriber-by-phone/${phone}`)
        assert.deepEqual(
          [res.status, res.body],
          [404, { errors: ['Subscriber not found in this list'] }],
          phone,
        )
      }
      const theirs = await t.req('GET', `/lists/${listId}/subscriber-by-phone/+420777123456`, {
        key: other.key,
      })
      assert.deepEqual([theirs.status, theirs.body], [404, { message: 'List not found' }])
    })
  })

  describe('GET /subscribers/{email}', () => {
    it('returns the person with every list of the account, keyed by list id', async () => {
      const res = await t.req('GET', '/subscribers/jan.novak+news@shop.cz')
      assert.equal(res.status, 200)
      assert.deepEqual(res.body, {
        subscriber: {
          id: jan.id,
          name: 'Jan',
          surname: 'Novák "Honza"',
          email: 'jan.novak+news@shop.cz',
          gender: 'male',
          company: null,
          city: 'Praha',
          country: 'CZ',
          phone: '+420 777 123 456',
          vokativ: '',
          vokativ_s: '',
          bounce_soft: 0,
          bounced_hard: 0,
          bounce_message: null,
          inserted_at: '2025-12-31 23:59:58',
          rating: 4.5,
          tags: ['vip', 'škola'],
          custom_fields: { order_count: 3, note: { value: 'ünïcode "quoted"', type: 'string' } },
          lists: {
            [String(listId)]: {
              id: janMain.id,
              list_id: listId,
              email: 'jan.novak+news@shop.cz',
              status: 1,
              subscribed_at: '2026-01-02T03:04:05.123000Z',
              source: 'form',
              groups: { interests: ['shoes', 'bags'] },
            },
            [String(secondList)]: {
              id: janSecond.id,
              list_id: secondList,
              email: 'jan.novak+news@shop.cz',
              status: 2,
              subscribed_at: '2025-06-01T10:00:00.000000Z',
              source: 'api',
              groups: { interests: ['shoes', 'bags'] },
            },
          },
        },
      })
      assert.match(res.body.subscriber.inserted_at, DATE_TIME)
      const encoded = await t.req('GET', '/subscribers/JAN.NOVAK%2Bnews@shop.cz')
      assert.deepEqual(encoded.body, res.body)
      const none = await rows.contact(me, { email: 'nolists@shop.cz' })
      const bare = await t.req('GET', '/subscribers/nolists@shop.cz')
      assert.deepEqual([bare.body.subscriber.id, bare.body.subscriber.lists], [none.id, {}])
    })

    it('answers 404 {message} for an unknown address; another account sees only its own person', async () => {
      const res = await t.req('GET', '/subscribers/nobody@shop.cz')
      assert.deepEqual([res.status, res.body], [404, { message: 'Subscriber not found' }])
      const theirs = await t.req('GET', '/subscribers/jan.novak+news@shop.cz', { key: other.key })
      assert.equal(theirs.body.subscriber.name, 'Not yours')
      assert.deepEqual(Object.keys(theirs.body.subscriber.lists), [String(theirList)])
      const none = await t.req('GET', '/subscribers/jan.novak+news@shop.cz', { key: stranger.key })
      assert.deepEqual([none.status, none.body], [404, { message: 'Subscriber not found' }])
      assert.equal((await t.req('GET', '/subscribers/a@b.cz', { key: null })).status, 401)
    })
  })

  describe('DELETE /subscribers/{email}/delete', () => {
    it('erases the person from every list of the account, and nothing else', async () => {
      const eva = await rows.contact(me, { email: 'eva+gdpr@shop.cz', name: 'Eva' })
      await rows.join(eva, listId)
      await rows.join(eva, secondList, { status: 2 })
      const theirEva = await rows.contact(other.id, { email: 'eva+gdpr@shop.cz' })
      await rows.join(theirEva, theirList)

      await t.ctx.db.insert(events).values([
        { accountId: me, email: 'eva+gdpr@shop.cz', event: 'open' },
        { accountId: other.id, email: 'eva+gdpr@shop.cz', event: 'open' },
      ])
      await t.ctx.db.insert(messages).values({
        accountId: me,
        kind: 'transactional',
        email: 'eva+gdpr@shop.cz',
        recipientName: 'Eva Svobodová',
        vars: { name: 'Eva', vokativ: 'Evo' },
        html: '<p>Eva</p>',
      })

      const foreign = await t.req('DELETE', '/subscribers/eva+gdpr@shop.cz/delete', { key: stranger.key })
      assert.deepEqual([foreign.status, foreign.body], [404, { message: 'Subscriber not found' }])

      const res = await t.req('DELETE', '/subscribers/EVA%2Bgdpr@shop.cz/delete', { body: {} })
      assert.equal(res.status, 200)
      assert.deepEqual(res.body, { deleted: true })
      assert.deepEqual(await t.ctx.db.select().from(contacts).where(eq(contacts.id, eva.id)), [])
      assert.deepEqual(await t.ctx.db.select().from(memberships).where(eq(memberships.contactId, eva.id)), [])
      assert.equal((await t.req('GET', '/subscribers/eva+gdpr@shop.cz')).status, 404)
      assert.equal((await t.req('GET', `/lists/${listId}/subscriber/eva+gdpr@shop.cz`)).status, 404)
      // The logs keep the rows but not the address: one stable pseudonym, and the stored mail body is gone.
      const myEvents = await t.ctx.db.select().from(events).where(eq(events.accountId, me))
      assert.equal(myEvents.length, 1)
      assert.match(myEvents[0]!.email, /^erased-[0-9a-f]{24}@erased\.invalid$/)
      const [myMessage] = await t.ctx.db.select().from(messages).where(eq(messages.accountId, me))
      assert.equal(myMessage!.email, myEvents[0]!.email)
      assert.equal(myMessage!.html, null)
      // Nor the values its mail would be rendered again with (the web version, the click page).
      assert.deepEqual([myMessage!.vars, myMessage!.recipientName], [null, ''])
      const theirEvents = await t.ctx.db.select().from(events).where(eq(events.accountId, other.id))
      assert.equal(theirEvents[0]!.email, 'eva+gdpr@shop.cz')

      // The same address in another account is another person, untouched.
      const kept = await t.req('GET', '/subscribers/eva+gdpr@shop.cz', { key: other.key })
      assert.equal(kept.body.subscriber.id, theirEva.id)
      assert.equal((await t.req('GET', '/subscribers/jan.novak+news@shop.cz')).status, 200)

      const again = await t.req('DELETE', '/subscribers/eva+gdpr@shop.cz/delete')
      assert.deepEqual([again.status, again.body], [404, { message: 'Subscriber not found' }])
      assert.equal((await t.req('DELETE', '/subscribers/a@b.cz/delete', { key: null })).status, 401)
    })
  })
})
