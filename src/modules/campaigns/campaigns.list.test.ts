import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { campaignBody, createList, setCampaign } from './campaigns.test-helpers.js'

describe('GET /campaigns', async () => {
  const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'))
  const t = await startTestApp({ clock, worker: false })
  const other = await t.createAccount()
  const list = await createList(t, t.account)
  const theirList = await createList(t, other)

  const create = async (at: string, overrides: Record<string, unknown>) => {
    clock.set(new Date(at))
    const res = await t.req('POST', '/campaigns', { body: campaignBody([list], overrides) })
    assert.equal(res.status, 200, res.text)
    return res.body.id as number
  }
  // Four campaigns whose every sort key and filter differ in a known way.
  const spring = await create('2026-03-01T10:00:00Z', { title: 'Spring Sale', subject: 'Big discounts' })
  const summer = await create('2026-03-05T00:00:00Z', { title: 'summer news', subject: 'Hello SUMMER' })
  const autumn = await create('2026-03-05T23:59:59Z', { title: 'Autumn 100%_off', subject: 'Leaves' })
  const winter = await create('2026-03-08T12:00:00Z', { title: 'Winter', subject: 'Snow' })
  await setCampaign(t, spring, { status: 3, sentAt: new Date('2026-03-02T08:00:00Z'), recipients: 5 })
  await setCampaign(t, autumn, { status: 7, scheduledAt: new Date('2026-04-01T06:00:00Z') })
  await setCampaign(t, winter, { status: 3, sentAt: new Date('2026-03-10T23:59:59Z') })
  clock.set(new Date('2026-03-08T12:00:00Z'))
  await t.req('POST', '/campaigns', { body: campaignBody([theirList], { title: 'Spring' }), key: other.key })

  const ids = async (query: string) => {
    const res = await t.req('GET', `/campaigns${query}`)
    assert.equal(res.status, 200, res.text)
    assert.ok(Array.isArray(res.body))
    return res.body.map((c: { id: number }) => c.id)
  }

  it('returns a bare array of list items, newest id first', async () => {
    const res = await t.req('GET', '/campaigns')
    assert.deepEqual(
      res.body.map((c: { id: number }) => c.id),
      [winter, autumn, summer, spring],
    )
    const item = res.body.find((c: { id: number }) => c.id === spring)
    assert.deepEqual(Object.keys(item).sort(), [
      'archive_url',
      'error',
      'from_email',
      'from_name',
      'id',
      'recipients',
      'reply_to',
      'scheduled_at',
      'sent_at',
      'status',
      'subject',
      'template_id',
      'title',
    ])
    assert.equal(item.sent_at, '2026-03-02 08:00:00')
    assert.equal(item.recipients, 5)
    assert.equal(item.scheduled_at, null)
    assert.equal(item.template_id, 0)
    const scheduled = res.body.find((c: { id: number }) => c.id === autumn)
    assert.equal(scheduled.scheduled_at, '2026-04-01 06:00:00')
    assert.equal(scheduled.sent_at, null)
  })

  it('sorts by each allowed key in both directions', async () => {
    assert.deepEqual(await ids('?sort_by=id&sort_dir=asc'), [spring, summer, autumn, winter])
    // Campaigns not sent come last either way, by id in the same direction.
    assert.deepEqual(await ids('?sort_by=sent_at'), [winter, spring, autumn, summer])
    assert.deepEqual(await ids('?sort_by=sent_at&sort_dir=asc'), [spring, winter, summer, autumn])
    assert.deepEqual(await ids('?sort_by=changed_at&sort_dir=asc'), [spring, summer, autumn, winter])
    assert.deepEqual(await ids('?sort_by=changed_at&sort_dir=desc'), [winter, autumn, summer, spring])
    assert.deepEqual(await ids('?sort_by=title&sort_dir=asc'), [autumn, spring, summer, winter])
    assert.deepEqual(await ids('?sort_by=title&sort_dir=desc'), [winter, summer, spring, autumn])
    assert.deepEqual(await ids('?sort_by=status&sort_dir=asc'), [summer, spring, winter, autumn])
    assert.deepEqual(await ids('?sort_by=status'), [autumn, winter, spring, summer])
  })

  it('pages with page and per_page', async () => {
    assert.deepEqual(await ids('?per_page=2'), [winter, autumn])
    assert.deepEqual(await ids('?per_page=2&page=2'), [summer, spring])
    assert.deepEqual(await ids('?per_page=2&page=3'), [])
    assert.deepEqual(await ids('?per_page=100&page=1'), [winter, autumn, summer, spring])
  })

  it('defaults to 20 per page', async () => {
    const many = Array.from({ length: 18 }, (_, i) => i)
    const extra: number[] = []
    for (const i of many) extra.push(await create('2026-03-09T00:00:00Z', { title: `Bulk ${i}` }))
    try {
      const page = await ids('')
      assert.equal(page.length, 20)
      assert.deepEqual(await ids('?page=2'), [summer, spring])
    } finally {
      for (const id of extra) await t.req('DELETE', `/campaigns/${id}`)
    }
  })

  it('filters by title and subject, containing, in any case', async () => {
    assert.deepEqual(await ids('?filters[title]=SUMMER'), [summer])
    assert.deepEqual(await ids('?filters[title]=s'), [summer, spring])
    // LIKE wildcards in the filter match themselves only.
    assert.deepEqual(await ids('?filters[title]=%25'), [autumn])
    assert.deepEqual(await ids('?filters[title]=0%25_o'), [autumn])
    assert.deepEqual(await ids('?filters[title]=_'), [autumn])
    assert.deepEqual(await ids('?filters[subject]=summer'), [summer])
    assert.deepEqual(await ids('?filters[subject]=o'), [winter, summer, spring])
  })

  it('filters by status and id', async () => {
    assert.deepEqual(await ids('?filters[status]=3'), [winter, spring])
    assert.deepEqual(await ids('?filters[status]=0'), [summer])
    assert.deepEqual(await ids('?filters[status]=7'), [autumn])
    assert.deepEqual(await ids('?filters[status]=2'), [])
    assert.deepEqual(await ids(`?filters[id]=${autumn}`), [autumn])
    assert.deepEqual(await ids('?filters[id]=999999'), [])
  })

  it('filters by the UTC day of the last change', async () => {
    assert.deepEqual(await ids('?filters[updated_at]=2026-03-05'), [autumn, summer])
    assert.deepEqual(await ids('?filters[updated_at]=2026-03-01'), [spring])
    assert.deepEqual(await ids('?filters[updated_at]=2026-03-04'), [])
  })

  it('filters by the day sending started, both ends inclusive', async () => {
    assert.deepEqual(await ids('?filters[date_from]=2026-03-02'), [winter, spring])
    assert.deepEqual(await ids('?filters[date_from]=2026-03-03'), [winter])
    assert.deepEqual(await ids('?filters[date_to]=2026-03-02'), [spring])
    assert.deepEqual(await ids('?filters[date_to]=2026-03-01'), [])
    assert.deepEqual(await ids('?filters[date_from]=2026-03-03&filters[date_to]=2026-03-10'), [winter])
    assert.deepEqual(await ids('?filters[date_from]=2026-03-02&filters[date_to]=2026-03-02'), [spring])
  })

  it('combines filters, with sorting and paging', async () => {
    assert.deepEqual(await ids('?filters[status]=3&filters[title]=in&sort_by=title&sort_dir=asc'), [
      spring,
      winter,
    ])
    assert.deepEqual(await ids('?filters[status]=3&per_page=1&page=2'), [spring])
  })

  it('takes bracketed names percent-encoded, as PHP sends them, and blank values as no filter', async () => {
    assert.deepEqual(await ids('?filters%5Btitle%5D=winter&filters%5Bstatus%5D=3'), [winter])
    assert.deepEqual(
      await ids(
        '?filters[title]=&filters[subject]=&filters[status]=&filters[id]=&filters[updated_at]=' +
          '&filters[date_from]=&filters[date_to]=',
      ),
      [winter, autumn, summer, spring],
    )
  })

  it('takes the filters as one JSON object (ecomail-php) exactly as the bracketed names', async () => {
    const json = (filters: unknown) => `?filters=${encodeURIComponent(JSON.stringify(filters))}`
    const pairs: [unknown, string][] = [
      [{ status: 3, title: 'in' }, '?filters[status]=3&filters[title]=in'],
      [{ status: '3' }, '?filters[status]=3'],
      [{ subject: 'SUMMER' }, '?filters[subject]=SUMMER'],
      [{ id: autumn }, `?filters[id]=${autumn}`],
      [{ updated_at: '2026-03-05' }, '?filters[updated_at]=2026-03-05'],
      [
        { date_from: '2026-03-03', date_to: '2026-03-10' },
        '?filters[date_from]=2026-03-03&filters[date_to]=2026-03-10',
      ],
      [{ title: '', status: null }, ''],
      [{}, ''],
    ]
    for (const [filters, bracketed] of pairs) {
      const expected = await ids(bracketed)
      assert.deepEqual(await ids(json(filters)), expected, JSON.stringify(filters))
    }
    assert.deepEqual(await ids(json({ status: 3, title: 'in' })), [winter, spring])
    // With sorting and paging, and with a bracketed parameter beside it, which wins.
    assert.deepEqual(await ids(`${json({ status: 3 })}&per_page=1&page=2`), [spring])
    assert.deepEqual(await ids(`${json({ status: 3 })}&filters[status]=0`), [summer])
    // Names outside contract §4 are ignored, as unknown query parameters are.
    assert.deepEqual(await ids(json({ colour: 'red', status: 7 })), [autumn])
    assert.deepEqual(await ids('?filters='), [winter, autumn, summer, spring])
  })

  it('answers 422 naming filters for JSON that is not an object, and the filter for a bad value', async () => {
    const cases: [string, string][] = [
      ['{"status":3', 'filters'],
      ['not json', 'filters'],
      ['[1,2]', 'filters'],
      ['3', 'filters'],
      ['"x"', 'filters'],
      ['null', 'filters'],
      ['{"status":"abc"}', 'filters[status]'],
      ['{"status":[3]}', 'filters[status]'],
      ['{"id":0}', 'filters[id]'],
      ['{"updated_at":"2026-02-30"}', 'filters[updated_at]'],
      ['{"date_from":"2026-03-05","date_to":"2026-03-04"}', 'filters[date_to]'],
    ]
    for (const [filters, field] of cases) {
      const res = await t.req('GET', `/campaigns?filters=${encodeURIComponent(filters)}`)
      assert.equal(res.status, 422, filters)
      assert.deepEqual(Object.keys(res.body.errors), [field], filters)
    }
    const twice = await t.req('GET', '/campaigns?filters={}&filters={}')
    assert.equal(twice.status, 422)
    assert.deepEqual(Object.keys(twice.body.errors), ['filters'])
  })

  it('answers 422 naming the bad parameter', async () => {
    const cases: [string, string][] = [
      ['per_page=101', 'per_page'],
      ['per_page=0', 'per_page'],
      ['page=x', 'page'],
      ['sort_by=name', 'sort_by'],
      ['sort_dir=up', 'sort_dir'],
      ['filters[status]=abc', 'filters[status]'],
      ['filters[id]=x', 'filters[id]'],
      ['filters[id]=0', 'filters[id]'],
      ['filters[updated_at]=2026-3-5', 'filters[updated_at]'],
      ['filters[updated_at]=2026-02-30', 'filters[updated_at]'],
      ['filters[date_from]=yesterday', 'filters[date_from]'],
      ['filters[date_to]=2026-13-01', 'filters[date_to]'],
      ['filters[date_from]=2026-03-05&filters[date_to]=2026-03-04', 'filters[date_to]'],
    ]
    for (const [query, field] of cases) {
      const res = await t.req('GET', `/campaigns?${query}`)
      assert.equal(res.status, 422, query)
      assert.deepEqual(Object.keys(res.body.errors), [field], query)
    }
  })

  it("lists only the account's own campaigns", async () => {
    const theirs = await t.req('GET', '/campaigns', { key: other.key })
    assert.equal(theirs.body.length, 1)
    assert.equal(theirs.body[0].title, 'Spring')
    assert.ok(!(await ids('?filters[title]=spring')).includes(theirs.body[0].id))
    assert.deepEqual(await ids(`?filters[id]=${theirs.body[0].id}`), [])
    assert.deepEqual(
      await ids(`?filters=${encodeURIComponent(JSON.stringify({ id: theirs.body[0].id }))}`),
      [],
    )
    assert.equal((await t.req('GET', '/campaigns', { key: null })).status, 401)
  })
})
