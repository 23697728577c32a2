import { before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { startTestApp, type TestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { queryRows } from '../../core/db/sql.js'
import { messages } from '../messages/index.js'
import { transactions } from '../transactions/index.js'
import { requireCondition } from './condition.js'
import { conditionSql, segmentMembersSql } from './condition.sql.js'

const NOW = new Date('2026-03-01T12:00:00Z')
const DAY = 86_400_000
const daysAgo = (n: number) => new Date(NOW.getTime() - n * DAY)

async function createList(t: TestApp, name: string, key?: string): Promise<number> {
  const res = await t.req('POST', '/lists', { body: { name }, ...(key ? { key } : {}) })
  assert.equal(res.status, 200)
  return res.body.id as number
}

async function bulk(t: TestApp, listId: number, entries: unknown[], key?: string) {
  const res = await t.req('POST', `/lists/${listId}/subscribe-bulk`, {
    body: { subscriber_data: entries },
    ...(key ? { key } : {}),
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
}

describe('conditionSql against a real database', async () => {
  const clock = new ManualClock(NOW)
  const t = await startTestApp({ clock, worker: false })
  const other = await t.createAccount()
  let list = 0
  let second = 0
  let theirList = 0

  before(async () => {
    list = await createList(t, 'Main')
    second = await createList(t, 'Second')
    theirList = await createList(t, 'Theirs', other.key)
    await bulk(t, list, [
      {
        email: 'a@x.cz',
        name: 'Anna',
        city: 'Praha',
        company: 'Acme',
        birthday: '1990-05-01',
        tags: ['vip', 'new'],
        custom_fields: { age: 30, vip: true, size: { value: 'M', type: 'string' }, joined: '2024-01-05' },
      },
      {
        email: 'b@x.cz',
        name: 'Bob',
        city: 'Brno',
        birthday: '2001-02-03',
        tags: ['new'],
        custom_fields: { age: '45', size: 'XL', joined: '2023-06-01' },
      },
      { email: 'c@x.cz', city: 'praha 5', custom_fields: { age: 'unknown' } },
      // Unsubscribed from the list: matches nothing, whatever its fields.
      { email: 'd@x.cz', city: 'Praha', tags: ['vip'], status: 2 },
      { email: 'e@x.cz' },
    ])
    await bulk(t, second, [{ email: 'a@x.cz' }, { email: 'c@x.cz' }, { email: 'b@x.cz', status: 2 }])
    // The other account has the same addresses, purchases and opens: none of it may leak into ours.
    await bulk(t, theirList, [{ email: 'c@x.cz' }, { email: 'e@x.cz' }], other.key)

    const tx = (accountId: number, orderId: string, email: string, at: Date) => ({
      accountId,
      orderId,
      email,
      occurredAt: at,
    })
    await t.ctx.db
      .insert(transactions)
      .values([
        tx(t.account.id, 'o1', 'a@x.cz', daysAgo(10)),
        tx(t.account.id, 'o2', 'b@x.cz', daysAgo(40)),
        tx(other.id, 'o3', 'c@x.cz', daysAgo(1)),
      ])
    const msg = (
      accountId: number,
      email: string,
      actionId: string,
      pipelineId: number,
      open: boolean,
      click: boolean,
    ) => ({
      accountId,
      kind: 'automation' as const,
      email,
      actionId,
      pipelineId,
      firstOpenAt: open ? daysAgo(1) : null,
      firstClickAt: click ? daysAgo(1) : null,
    })
    await t.ctx.db
      .insert(messages)
      .values([
        msg(t.account.id, 'a@x.cz', 'm1', 5, true, false),
        msg(t.account.id, 'b@x.cz', 'm1', 6, true, true),
        msg(t.account.id, 'c@x.cz', 'm2', 5, true, false),
        msg(t.account.id, 'e@x.cz', 'm2', 5, false, false),
        msg(other.id, 'e@x.cz', 'm1', 5, true, true),
      ])
  })

  /** Emails of the list's members matching `filter`, sorted. */
  async function match(filter: unknown, now = NOW, listId = list): Promise<string[]> {
    const cond = requireCondition(filter, 'filter')
    const rows = await queryRows<{ email: string }>(
      t.ctx.db,
      sql`SELECT email FROM contacts WHERE id IN (${segmentMembersSql(t.account.id, listId, cond, now)})
          ORDER BY email`,
    )
    return rows.map((r) => r.email.replace('@x.cz', ''))
  }

  const f = (field: string, op: string, value?: unknown) => ({
    field,
    op,
    ...(value === undefined ? {} : { value }),
  })

  it('eq and neq on contact columns (neq includes contacts without the value)', async () => {
    assert.deepEqual(await match(f('city', 'eq', 'Praha')), ['a'])
    assert.deepEqual(await match(f('city', 'neq', 'Praha')), ['b', 'c', 'e'])
    assert.deepEqual(await match(f('name', 'eq', 'anna')), [], 'eq is case-sensitive')
    assert.deepEqual(await match(f('email', 'eq', ' A@X.cz')), ['a'], 'addresses compare lower-cased')
    assert.deepEqual(await match(f('company', 'neq', 'Acme')), ['b', 'c', 'e'], 'null company is not Acme')
  })

  it('contains is case-insensitive', async () => {
    assert.deepEqual(await match(f('city', 'contains', 'PRAHA')), ['a', 'c'])
    assert.deepEqual(await match(f('size', 'contains', 'x')), ['b'])
    assert.deepEqual(await match(f('city', 'contains', "'%_\\")), [], 'no wildcard or quote is special')
  })

  it('exists, and exists false', async () => {
    assert.deepEqual(await match(f('company', 'exists')), ['a'])
    assert.deepEqual(await match(f('company', 'exists', false)), ['b', 'c', 'e'])
    assert.deepEqual(await match(f('city', 'exists')), ['a', 'b', 'c'], 'an empty column does not exist')
    assert.deepEqual(await match(f('age', 'exists')), ['a', 'b', 'c'])
    assert.deepEqual(await match(f('size', 'exists')), ['a', 'b'])
  })

  it('gt and lt: numerically for numbers, as text (dates) otherwise', async () => {
    assert.deepEqual(await match(f('age', 'gt', 35)), ['b'], 'a text that is no number never compares')
    assert.deepEqual(await match(f('age', 'lt', 35)), ['a'])
    assert.deepEqual(await match(f('age', 'gt', 4)), ['a', 'b'], 'numerically, not as text ("30" < "4")')
    assert.deepEqual(await match(f('joined', 'gt', '2023-12-31')), ['a'])
    assert.deepEqual(await match(f('birthday', 'lt', '2000-01-01')), ['a'], 'no birthday is not before')
    assert.deepEqual(await match(f('birthday', 'gt', '2000-01-01')), ['b'])
  })

  it('custom fields: scalars of any JSON type and {value, type}', async () => {
    assert.deepEqual(await match(f('age', 'eq', 30)), ['a'])
    assert.deepEqual(await match(f('age', 'eq', '45')), ['b'])
    assert.deepEqual(await match(f('age', 'eq', 45)), ['b'], 'a numeric string equals the number')
    assert.deepEqual(await match(f('vip', 'eq', true)), ['a'])
    assert.deepEqual(await match(f('vip', 'eq', false)), [])
    assert.deepEqual(await match(f('size', 'eq', 'M')), ['a'])
    assert.deepEqual(await match(f('Size', 'eq', 'XL')), ['b'], 'custom field keys are lower-cased')
    assert.deepEqual(await match(f("x'); DROP TABLE contacts; --", 'eq', 'y')), [])
  })

  it('tags', async () => {
    assert.deepEqual(await match({ tag: 'vip' }), ['a'])
    assert.deepEqual(await match({ tag: 'new' }), ['a', 'b'])
    assert.deepEqual(await match({ tag: 'VIP' }), [])
  })

  it('in_list: status-1 membership of another list of the account', async () => {
    assert.deepEqual(await match({ in_list: second }), ['a', 'c'])
    assert.deepEqual(await match({ in_list: theirList }), [], "another account's list holds none of ours")
    assert.deepEqual(await match({ in_list: 999999 }), [])
  })

  it('purchased within the last N days of the given now', async () => {
    assert.deepEqual(await match({ purchased: { days: 30 } }), ['a'])
    assert.deepEqual(await match({ purchased: { days: 60 } }), ['a', 'b'])
    assert.deepEqual(await match({ purchased: { days: 30 } }, new Date(NOW.getTime() + 25 * DAY)), [])
    assert.deepEqual(
      await match({ purchased: { days: 60 } }, daysAgo(20)),
      ['b'],
      'later purchases do not count',
    )
  })

  it('opened and clicked an automation mail node', async () => {
    assert.deepEqual(await match({ opened: 'm1' }), ['a', 'b'])
    assert.deepEqual(await match({ clicked: 'm1' }), ['b'])
    assert.deepEqual(await match({ opened: 'm2' }), ['c'])
    assert.deepEqual(await match({ clicked: 'm2' }), [])
    assert.deepEqual(await match({ opened: 'none' }), [])
  })

  it('opened/clicked narrowed to one pipeline for the automation engine', async () => {
    const cond = requireCondition({ opened: 'm1' }, 'condition')
    const rows = await queryRows<{ email: string }>(
      t.ctx.db,
      sql`SELECT c.email FROM contacts c
          WHERE c.account_id = ${t.account.id}
            AND ${conditionSql(cond, { accountId: t.account.id, now: NOW, pipelineId: 5 })}
          ORDER BY c.email`,
    )
    assert.deepEqual(
      rows.map((r) => r.email),
      ['a@x.cz'],
    )
  })

  it('all, any and not nest', async () => {
    assert.deepEqual(await match({ all: [{ tag: 'new' }, { not: f('city', 'eq', 'Brno') }] }), ['a'])
    const either = { any: [f('city', 'eq', 'Brno'), { in_list: second }] }
    assert.deepEqual(await match(either), ['a', 'b', 'c'])
    assert.deepEqual(await match({ not: either }), ['e'])
    assert.deepEqual(await match({ not: { not: { tag: 'vip' } } }), ['a'])
    assert.deepEqual(
      await match({
        any: [
          { all: [{ purchased: { days: 60 } }, { not: { clicked: 'm1' } }] },
          { all: [f('age', 'exists'), { not: f('age', 'gt', 0) }] },
        ],
      }),
      ['a', 'c'],
    )
  })

  it('the members of another list are its own', async () => {
    assert.deepEqual(await match({ tag: 'vip' }, NOW, second), ['a'])
    assert.deepEqual(await match(f('city', 'exists'), NOW, second), ['a', 'c'])
  })

  it('binds every user value as a parameter', () => {
    const evil = "x'); DROP TABLE contacts; --"
    const cond = requireCondition(
      {
        all: [
          { field: evil, op: 'contains', value: evil },
          { field: 'city', op: 'gt', value: evil },
          { tag: evil },
          { opened: evil },
          { clicked: evil },
          { not: { field: 'age', op: 'lt', value: 12.5 } },
          { in_list: 77 },
          { purchased: { days: 9 } },
        ],
      },
      'filter',
    )
    const q = new PgDialect().sqlToQuery(conditionSql(cond, { accountId: 4242, now: NOW }))
    assert.equal(q.sql.includes('DROP'), false)
    assert.equal(/4242|12\.5|77/.test(q.sql), false)
    assert.ok(q.params.includes(evil))
    assert.ok(q.params.includes(4242) && q.params.includes(12.5) && q.params.includes(77))
  })

  it('event: a tracker event of the subscriber, by category and, when given, action', async () => {
    const track = async (email: string, category: string, action: string, key?: string) => {
      const res = await t.req('POST', '/tracker/events', {
        body: { event: { email, category, action } },
        ...(key ? { key } : {}),
      })
      assert.equal(res.status, 200, JSON.stringify(res.body))
    }
    await track('a@x.cz', 'shop', 'view')
    await track('b@x.cz', 'shop', 'buy')
    await track('b@x.cz', 'blog', 'read')
    // The other account's contact of the same address: never ours.
    await track('c@x.cz', 'shop', 'view', other.key)
    assert.deepEqual(await match({ event: { category: 'shop' } }), ['a', 'b'])
    assert.deepEqual(await match({ event: { category: 'shop', action: 'view' } }), ['a'])
    assert.deepEqual(await match({ event: { category: 'blog', action: 'view' } }), [])
    assert.deepEqual(await match({ event: { category: 'Shop' } }), [], 'category is case-sensitive')
    assert.deepEqual(await match({ not: { event: { category: 'shop' } } }), ['c', 'e'])
    assert.deepEqual(await match({ all: [{ tag: 'new' }, { event: { category: 'blog' } }] }), ['b'])
  })
})
