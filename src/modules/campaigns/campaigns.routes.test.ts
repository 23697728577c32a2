import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { findCampaign } from './campaigns.repo.js'
import { addSegment, campaignBody, createList, setCampaign } from './campaigns.test-helpers.js'

const ARCHIVE = /^http:\/\/127\.0\.0\.1:3000\/archive\/[\w-]+\.[\w-]+$/
const DETAIL_STATS = [
  'inject',
  'send',
  'delivered',
  'open',
  'total_open',
  'click',
  'total_click',
  'hard_bounce',
  'spam',
  'unsub',
  'openrate',
  'clickrate',
  'delivery_rate',
]

describe('campaigns CRUD', async () => {
  const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'))
  const t = await startTestApp({ clock, worker: false })
  const other = await t.createAccount()
  const listA = await createList(t, t.account, 'A')
  const listB = await createList(t, t.account, 'B')
  const otherList = await createList(t, other, 'Theirs')
  await addSegment(t, t.account.id, listA, 'seg-a')
  await addSegment(t, t.account.id, listB, 'seg-b')
  await addSegment(t, other.id, otherList, 'seg-theirs')

  const create = async (overrides: Record<string, unknown> = {}, lists: unknown = [listA]) => {
    const res = await t.req('POST', '/campaigns', { body: campaignBody(lists, overrides) })
    assert.equal(res.status, 200, res.text)
    return res.body
  }

  it('creates a draft from a list of list ids', async () => {
    const res = await t.req('POST', '/campaigns', {
      body: campaignBody([listA, listB, listA], { from_email: ' News@Shop.Example ' }),
    })
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    const c = res.body
    assert.equal(typeof c.id, 'number')
    assert.deepEqual(
      { ...c, id: 0, archive_url: '' },
      {
        id: 0,
        from_name: 'Shop',
        from_email: 'news@shop.example',
        reply_to: 'help@shop.example',
        title: 'Spring newsletter',
        subject: 'News for *|name|*',
        sent_at: null,
        recipients: 0,
        status: 0,
        scheduled_at: null,
        template_id: 0,
        archive_url: '',
        error: null,
        recepient_lists: { lists: [listA, listB], segments: [] },
      },
    )
    assert.match(c.archive_url, ARCHIVE)
  })

  it('creates with segments, lists, a template, plain text and a stored scheduled_at (still a draft)', async () => {
    const template = (await t.req('POST', '/templates', { body: { name: 'T', html: '<p>t</p>' } })).body
    const c = await create(
      {
        template_id: template.id,
        plain_text: 'Hello',
        scheduled_at: '2026-04-01 08:30:00',
      },
      { lists: [listB], segments: [{ id: 'seg-a', list: listA }] },
    )
    assert.equal(c.status, 0)
    assert.equal(c.template_id, template.id)
    assert.equal(c.scheduled_at, '2026-04-01 08:30:00')
    assert.deepEqual(c.recepient_lists, { lists: [listB], segments: [{ id: 'seg-a', list: listA }] })
    const detail = (await t.req('GET', `/campaigns/${c.id}`)).body
    assert.equal(detail.plain_text, 'Hello')
    assert.equal(detail.html_text, '<p>Hello *|name|*</p>')
    // Segments alone, without `lists`, are a target too.
    const onlySegments = await create({}, { segments: [{ id: 'seg-b', list: listB }] })
    assert.deepEqual(onlySegments.recepient_lists, { lists: [], segments: [{ id: 'seg-b', list: listB }] })
  })

  it('reads null, empty and 0 as "none" for the optional fields', async () => {
    const c = await create({ template_id: 0, plain_text: null, scheduled_at: '' })
    assert.equal(c.template_id, 0)
    assert.equal(c.scheduled_at, null)
    const nulls = await create({ template_id: null, scheduled_at: null })
    assert.equal(nulls.template_id, 0)
    assert.equal((await t.req('GET', `/campaigns/${nulls.id}`)).body.plain_text, null)
  })

  it('refuses a one-element array in place of an optional field, and stores nothing', async () => {
    // Ajv's coercion let `["…"]` through a union that tried null first, and the service answered with a 500.
    const before = (await t.req('GET', '/campaigns')).body.length
    for (const [field, value] of [
      ['plain_text', ['Plain']],
      ['template_id', [5]],
      ['scheduled_at', ['2030-01-01 10:00:00']],
    ] as const) {
      const res = await t.req('POST', '/campaigns', { body: campaignBody([listA], { [field]: value }) })
      assert.equal(res.status, 422, `${field}: ${res.text}`)
      assert.deepEqual(Object.keys(res.body.errors), [field])
    }
    assert.equal((await t.req('GET', '/campaigns')).body.length, before)
  })

  it('requires every api.md field', async () => {
    const res = await t.req('POST', '/campaigns', { body: {} })
    assert.equal(res.status, 422)
    assert.deepEqual(Object.keys(res.body.errors).sort(), [
      'from_email',
      'from_name',
      'html_text',
      'recepient_lists',
      'reply_to',
      'subject',
      'title',
    ])
    assert.deepEqual(res.body.errors.title, ['The title field is required.'])
    const blank = await t.req('POST', '/campaigns', {
      body: campaignBody([listA], { title: '   ', subject: ' ', html_text: '  ' }),
    })
    assert.equal(blank.status, 422)
    assert.deepEqual(Object.keys(blank.body.errors).sort(), ['html_text', 'subject', 'title'])
  })

  it('refuses invalid addresses', async () => {
    const res = await t.req('POST', '/campaigns', {
      body: campaignBody([listA], { from_email: 'nope', reply_to: 'a@b' }),
    })
    assert.equal(res.status, 422)
    assert.deepEqual(res.body.errors, {
      from_email: ['The from_email must be a valid email address.'],
      reply_to: ['The reply_to must be a valid email address.'],
    })
  })

  it('refuses targets that are not the account’s lists and segments', async () => {
    const bad: unknown[] = [
      [],
      {},
      { lists: [], segments: [] },
      [listA, 999999],
      [otherList],
      { segments: [{ id: 'seg-a', list: listB }] },
      { segments: [{ id: 'nope', list: listA }] },
      { segments: [{ id: 'seg-theirs', list: otherList }] },
      { segments: [{ id: 'seg-a' }] },
      'abc',
      [{ id: 1 }],
    ]
    for (const lists of bad) {
      const res = await t.req('POST', '/campaigns', { body: campaignBody(lists) })
      assert.equal(res.status, 422, JSON.stringify(lists))
      assert.deepEqual(Object.keys(res.body.errors), ['recepient_lists'], JSON.stringify(lists))
    }
    const res = await t.req('POST', '/campaigns', { body: campaignBody([listA, 999999]) })
    assert.deepEqual(res.body.errors.recepient_lists, ['The list 999999 does not exist.'])
  })

  it('refuses another account’s or an unknown template, and a bad scheduled_at', async () => {
    const theirs = (await t.req('POST', '/templates', { body: { name: 'X', html: 'x' }, key: other.key }))
      .body
    for (const template_id of [theirs.id, 999999]) {
      const res = await t.req('POST', '/campaigns', { body: campaignBody([listA], { template_id }) })
      assert.equal(res.status, 422)
      assert.deepEqual(Object.keys(res.body.errors), ['template_id'])
    }
    for (const scheduled_at of ['2026-04-01', '2026-02-30 10:00:00', '2026-04-01T10:00:00Z', 5]) {
      const res = await t.req('POST', '/campaigns', { body: campaignBody([listA], { scheduled_at }) })
      assert.equal(res.status, 422, String(scheduled_at))
      assert.deepEqual(Object.keys(res.body.errors), ['scheduled_at'])
    }
  })

  it('shows the detail with targets and zero statistics before sending', async () => {
    const c = await create({}, { lists: [listB], segments: [{ id: 'seg-a', list: listA }] })
    const res = await t.req('GET', `/campaigns/${c.id}`)
    assert.equal(res.status, 200)
    const d = res.body
    assert.equal(d.id, c.id)
    assert.equal(d.archive_url, c.archive_url)
    assert.equal(d.sent_at, null)
    assert.equal(d.recipients, 0)
    assert.equal(d.error, null)
    assert.deepEqual(d.recepient_lists, { lists: [listB], segments: [{ id: 'seg-a', list: listA }] })
    for (const key of DETAIL_STATS) assert.equal(d.stats[key], 0, key)
    for (const [key, value] of Object.entries(d.stats)) assert.equal(value, 0, key)
  })

  it('formats sent_at like every other time once sending started', async () => {
    const c = await create()
    await setCampaign(t, c.id, { status: 3, sentAt: new Date('2026-03-02T08:09:10Z'), recipients: 12 })
    const d = (await t.req('GET', `/campaigns/${c.id}`)).body
    assert.equal(d.sent_at, '2026-03-02 08:09:10')
    assert.equal(d.recipients, 12)
    assert.equal(d.status, 3)
  })

  it('starts sending by any of its paths (contract §1 aliases, and GET on the plural path)', async () => {
    for (const [method, path] of [
      ['POST', 'campaigns'],
      ['POST', 'campaign'],
      ['GET', 'campaign'],
      ['GET', 'campaigns'],
    ] as const) {
      const c = await create()
      const res = await t.req(method, `/${path}/${c.id}/send`)
      assert.equal(res.status, 200, `${method} ${path}: ${res.text}`)
      assert.deepEqual(res.body, { id: c.id, status: 1 })
      assert.equal((await t.req('GET', `/campaigns/${c.id}`)).body.status, 1, `${method} ${path}`)
    }
  })

  it('answers 404 for an unknown id and for a non-numeric one', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const body = method === 'PUT' ? campaignBody([listA]) : undefined
      const missing = await t.req(method, '/campaigns/999999', { body })
      assert.equal(missing.status, 404)
      assert.deepEqual(missing.body, { message: 'Campaign not found' })
      const bad = await t.req(method, '/campaigns/abc', { body })
      assert.equal(bad.status, 404)
      assert.deepEqual(bad.body, { message: 'Not Found' })
    }
  })

  it('updates a draft: every field replaced, the rest kept, changed_at moved', async () => {
    const c = await create({ plain_text: 'Plain', template_id: null })
    clock.advance(3_600_000)
    const res = await t.req('PUT', `/campaigns/${c.id}`, {
      body: campaignBody(
        { segments: [{ id: 'seg-b', list: listB }] },
        {
          title: 'Renamed',
          from_name: 'Other',
          from_email: 'other@shop.example',
          reply_to: 'other-help@shop.example',
          subject: 'New subject',
          html_text: '<p>New</p>',
        },
      ),
    })
    assert.equal(res.status, 200)
    assert.deepEqual(
      { ...res.body, archive_url: '' },
      {
        id: c.id,
        from_name: 'Other',
        from_email: 'other@shop.example',
        reply_to: 'other-help@shop.example',
        title: 'Renamed',
        subject: 'New subject',
        sent_at: null,
        recipients: 0,
        status: 0,
        scheduled_at: null,
        template_id: 0,
        archive_url: '',
        error: null,
        recepient_lists: { lists: [], segments: [{ id: 'seg-b', list: listB }] },
      },
    )
    assert.equal(res.body.archive_url, c.archive_url)
    const row = (await findCampaign(t.ctx.db, t.account.id, c.id))!
    assert.equal(row.htmlText, '<p>New</p>')
    assert.equal(row.plainText, 'Plain')
    assert.equal(row.changedAt.getTime() - row.createdAt.getTime(), 3_600_000)
  })

  it('validates a PUT body as a POST body', async () => {
    const c = await create()
    const missing = await t.req('PUT', `/campaigns/${c.id}`, { body: { title: 'Only' } })
    assert.equal(missing.status, 422)
    assert.deepEqual(Object.keys(missing.body.errors).sort(), [
      'from_email',
      'from_name',
      'html_text',
      'recepient_lists',
      'reply_to',
      'subject',
    ])
    const theirs = await t.req('PUT', `/campaigns/${c.id}`, { body: campaignBody([otherList]) })
    assert.equal(theirs.status, 422)
    assert.deepEqual(Object.keys(theirs.body.errors), ['recepient_lists'])
  })

  it('updates a scheduled campaign and keeps it scheduled, but will not drop its time', async () => {
    const c = await create()
    await setCampaign(t, c.id, { status: 7, scheduledAt: new Date('2026-05-01T09:00:00Z') })
    const kept = await t.req('PUT', `/campaigns/${c.id}`, { body: campaignBody([listB], { title: 'S' }) })
    assert.equal(kept.status, 200)
    assert.equal(kept.body.status, 7)
    assert.equal(kept.body.scheduled_at, '2026-05-01 09:00:00')
    const moved = await t.req('PUT', `/campaigns/${c.id}`, {
      body: campaignBody([listB], { scheduled_at: '2026-05-02 10:00:00' }),
    })
    assert.equal(moved.body.scheduled_at, '2026-05-02 10:00:00')
    const cleared = await t.req('PUT', `/campaigns/${c.id}`, {
      body: campaignBody([listB], { scheduled_at: null }),
    })
    assert.equal(cleared.status, 422)
    assert.deepEqual(Object.keys(cleared.body.errors), ['scheduled_at'])
    // A draft may drop a stored time.
    const draft = await create({ scheduled_at: '2026-05-02 10:00:00' })
    const res = await t.req('PUT', `/campaigns/${draft.id}`, {
      body: campaignBody([listA], { scheduled_at: null }),
    })
    assert.equal(res.body.scheduled_at, null)
  })

  it('refuses to change or delete a campaign once sending started', async () => {
    for (const status of [1, 2, 3, 4] as const) {
      const c = await create()
      await setCampaign(t, c.id, { status })
      const put = await t.req('PUT', `/campaigns/${c.id}`, { body: campaignBody([listA], { title: 'x' }) })
      assert.equal(put.status, 422)
      assert.deepEqual(Object.keys(put.body.errors), ['status'])
      const del = await t.req('DELETE', `/campaigns/${c.id}`)
      assert.equal(del.status, 422)
      assert.deepEqual(Object.keys(del.body.errors), ['status'])
      assert.equal((await t.req('GET', `/campaigns/${c.id}`)).body.title, 'Spring newsletter')
    }
  })

  it('deletes drafts and scheduled campaigns', async () => {
    for (const status of [0, 7] as const) {
      const c = await create()
      await setCampaign(t, c.id, { status })
      assert.deepEqual((await t.req('DELETE', `/campaigns/${c.id}`)).body, { deleted: true })
      assert.equal((await t.req('GET', `/campaigns/${c.id}`)).status, 404)
      assert.equal((await t.req('DELETE', `/campaigns/${c.id}`)).status, 404)
    }
  })

  it("hides another account's campaigns", async () => {
    const c = await create()
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const body = method === 'PUT' ? campaignBody([otherList]) : undefined
      const res = await t.req(method, `/campaigns/${c.id}`, { key: other.key, body })
      assert.equal(res.status, 404, method)
      assert.deepEqual(res.body, { message: 'Campaign not found' })
    }
    assert.deepEqual((await t.req('GET', '/campaigns', { key: other.key })).body, [])
    assert.equal((await t.req('GET', `/campaigns/${c.id}`)).status, 200)
    for (const [method, url] of [
      ['GET', '/campaigns'],
      ['POST', '/campaigns'],
      ['GET', `/campaigns/${c.id}`],
    ] as const) {
      assert.equal((await t.req(method, url, { key: null })).status, 401)
    }
  })
})
