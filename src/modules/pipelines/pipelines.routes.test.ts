import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { ManualClock } from '../../core/clock.js'
import { eq } from 'drizzle-orm'
import { findPipeline, pipelines, type PipelineNode } from './index.js'

const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/

interface NodeBody {
  id: string
  type: string
  properties: Record<string, unknown>
  next: unknown
}
interface Body {
  name: string
  list_id: number
  actions: NodeBody[]
  [key: string]: unknown
}

describe('pipelines routes', async () => {
  const clock = new ManualClock(new Date('2026-05-01T10:00:00Z'))
  const t = await startTestApp({ worker: false, clock })
  const other = await t.createAccount()
  const listId: number = (await t.req('POST', '/lists', { body: { name: 'L' } })).body.id
  const list2: number = (await t.req('POST', '/lists', { body: { name: 'L2' } })).body.id
  const otherList: number = (await t.req('POST', '/lists', { key: other.key, body: { name: 'O' } })).body.id
  const template: number = (await t.req('POST', '/templates', { body: { name: 'T', html: '<p>x</p>' } })).body
    .id
  const otherTemplate: number = (
    await t.req('POST', '/templates', { key: other.key, body: { name: 'T', html: 'x' } })
  ).body.id

  /** A welcome flow: mail, wait, check on its open, tag or a second mail, end. */
  const welcome = (): Body => ({
    name: 'Welcome',
    list_id: listId,
    actions: [
      { id: 'm1', type: 'mail', properties: { name: 'Hello', template }, next: ['w1'] },
      { id: 'w1', type: 'wait', properties: { name: 'Wait', value: 3, unit: 'days' }, next: ['c1'] },
      {
        id: 'c1',
        type: 'check',
        properties: { name: 'Opened?', condition: { opened: 'm1' } },
        next: { yes: ['t1'], no: ['m2'] },
      },
      { id: 't1', type: 'tag', properties: { name: 'Tag', tag: 'engaged' }, next: ['e1'] },
      {
        id: 'm2',
        type: 'mail',
        properties: { name: 'Again', template },
        next: { default: ['e1'], quarantine_skip: ['e1'] },
      },
      { id: 'e1', type: 'end', properties: { name: 'End' }, next: null },
    ],
  })

  it('creates with defaults and reads it back whole', async () => {
    const res = await t.req('POST', '/pipelines', { body: welcome() })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const p = res.body
    assert.equal(typeof p.id, 'number')
    assert.equal(p.name, 'Welcome')
    assert.equal(p.list_id, listId)
    assert.equal(p.status, 'active')
    assert.deepEqual(p.trigger, { type: 'subscribe' })
    assert.equal(p.reentry, 'once')
    assert.equal(p.start, 'm1')
    assert.equal(p.version, 1)
    assert.equal(p.created_at, '2026-05-01 10:00:00')
    assert.match(p.updated_at, DATE_TIME)
    assert.equal(p.actions.length, 6)
    assert.deepEqual(p.actions[2], welcome().actions[2])
    assert.deepEqual(p.actions[5].next, null)

    const got = await t.req('GET', `/pipelines/${p.id}`)
    assert.deepEqual(got.body, p)
    const list = await t.req('GET', '/pipelines')
    assert.equal(list.status, 200)
    const item = list.body.find((x: { id: number }) => x.id === p.id)
    assert.deepEqual(Object.keys(item).sort(), [
      'created_at',
      'id',
      'list_id',
      'name',
      'reentry',
      'status',
      'trigger',
      'updated_at',
      'version',
    ])
  })

  it('lists the action nodes and one node, 404 {message} for an unknown one', async () => {
    const { id } = (await t.req('POST', '/pipelines', { body: welcome() })).body
    const all = await t.req('GET', `/pipelines/${id}/actions`)
    assert.equal(all.status, 200)
    assert.deepEqual(
      all.body.data.map((n: { id: string }) => n.id),
      ['m1', 'w1', 'c1', 't1', 'm2', 'e1'],
    )
    const one = await t.req('GET', `/pipelines/${id}/actions/c1`)
    assert.deepEqual(one.body, { data: welcome().actions[2] })
    const missing = await t.req('GET', `/pipelines/${id}/actions/zz`)
    assert.equal(missing.status, 404)
    assert.deepEqual(missing.body, { message: 'Action not found' })
  })

  it('updates: full body or some fields, bumping version in the same write', async () => {
    const { id } = (await t.req('POST', '/pipelines', { body: welcome() })).body
    clock.advance(60_000)
    const body = {
      ...welcome(),
      name: 'Welcome 2',
      trigger: { type: 'event', category: 'shop', action: 'view' },
      reentry: 'repeat',
      actions: [
        { id: 'n1', type: 'note', properties: { name: 'Hi' }, next: ['t9'] },
        { id: 't9', type: 'tag', properties: { name: 'T', tag: 'x' }, next: [] },
      ],
    }
    const put = await t.req('PUT', `/pipelines/${id}`, { body })
    assert.equal(put.status, 200, JSON.stringify(put.body))
    assert.equal(put.body.version, 2)
    assert.equal(put.body.start, 'n1')
    assert.equal(put.body.reentry, 'repeat')
    assert.deepEqual(put.body.trigger, { type: 'event', category: 'shop', action: 'view' })
    assert.equal(put.body.updated_at, '2026-05-01 10:01:00')
    assert.equal(put.body.created_at, '2026-05-01 10:00:00')

    const paused = await t.req('PUT', `/pipelines/${id}`, { body: { status: 'paused' } })
    assert.equal(paused.status, 200)
    assert.equal(paused.body.status, 'paused')
    assert.equal(paused.body.version, 3)
    assert.equal(paused.body.name, 'Welcome 2')
    assert.equal(paused.body.actions.length, 2)
    const row = await findPipeline(t.ctx.db, t.account.id, id)
    assert.equal(row?.version, 3)

    // A refused edit changes nothing.
    const bad = await t.req('PUT', `/pipelines/${id}`, { body: { start: 'nope' } })
    assert.equal(bad.status, 422)
    assert.deepEqual(Object.keys(bad.body.errors), ['start'])
    assert.equal((await t.req('GET', `/pipelines/${id}`)).body.version, 3)
  })

  it('updates what a PUT brings even when a list or template the pipeline names was deleted since', async () => {
    const gone: number = (await t.req('POST', '/templates', { body: { name: 'Gone', html: '<p>x</p>' } }))
      .body.id
    const goneList: number = (await t.req('POST', '/lists', { body: { name: 'Gone' } })).body.id
    const flow = {
      name: 'Refs',
      list_id: goneList,
      actions: [
        { id: 'm', type: 'mail', properties: { name: 'M', template: gone }, next: ['e'] },
        { id: 'e', type: 'end', properties: { name: 'E' }, next: null },
      ],
    }
    const { id } = (await t.req('POST', '/pipelines', { body: flow })).body
    assert.equal((await t.req('DELETE', `/templates/${gone}`)).status, 200)
    assert.equal((await t.req('DELETE', `/lists/${goneList}`)).status, 200)
    const paused = await t.req('PUT', `/pipelines/${id}`, { body: { status: 'paused', name: 'Refs 2' } })
    assert.equal(paused.status, 200, JSON.stringify(paused.body))
    assert.deepEqual([paused.body.status, paused.body.name], ['paused', 'Refs 2'])
    // What a PUT brings is checked: the deleted template and list again, named at their fields.
    const again = await t.req('PUT', `/pipelines/${id}`, {
      body: { list_id: goneList, actions: flow.actions },
    })
    assert.equal(again.status, 422)
    assert.deepEqual(Object.keys(again.body.errors).sort(), ['actions.0.properties.template', 'list_id'])
  })

  it('pauses a pipeline whose edit and webhook nodes were saved under earlier rules; a PUT of its actions checks them (a private webhook address too), unless they come back unchanged', async () => {
    const hook = { url: 'https://hooks.example.com/x' }
    const flow: Body = {
      name: 'Old edit',
      list_id: listId,
      actions: [
        { id: 'e1', type: 'edit', properties: { name: 'Edit', fields: { city: 'Brno' } }, next: ['h1'] },
        { id: 'h1', type: 'webhook', properties: { name: 'Hook', ...hook }, next: [] },
      ],
    }
    const { id } = (await t.req('POST', '/pipelines', { body: flow })).body
    // What the edit and header checks refuse today, stored as earlier versions of them accepted it.
    const stored = { source: 'facebook', birthday: '2026-02-30' }
    const headers = { 'Webhook-Id': 'mine' }
    // A private address named outright (this app runs without ALLOW_PRIVATE_NETWORK).
    const privateHook = { url: 'http://10.0.0.5/x' }
    await t.ctx.db
      .update(pipelines)
      .set({
        actions: [
          { ...flow.actions[0]!, properties: { name: 'Edit', fields: stored } },
          { ...flow.actions[1]!, properties: { name: 'Hook', ...privateHook, headers } },
        ] as PipelineNode[],
      })
      .where(eq(pipelines.id, id))
    const paused = await t.req('PUT', `/pipelines/${id}`, { body: { status: 'paused' } })
    assert.equal(paused.status, 200, paused.text)
    assert.equal(paused.body.status, 'paused')
    assert.deepEqual((await findPipeline(t.ctx.db, t.account.id, id))?.actions[0]?.properties.fields, stored)
    const again = await t.req('PUT', `/pipelines/${id}`, {
      body: {
        actions: [
          { ...flow.actions[0]!, properties: { fields: stored } },
          { ...flow.actions[1]!, properties: { ...privateHook, headers } },
        ],
      },
    })
    assert.equal(again.status, 422)
    assert.deepEqual(Object.keys(again.body.errors).sort(), [
      'actions.0.properties.fields.birthday',
      'actions.0.properties.fields.source',
      'actions.1.properties.headers.Webhook-Id',
      'actions.1.properties.url',
    ])
    // Sent back as GET shows them, beside a node added after them, they are the stored nodes: not judged again.
    const shown = (await t.req('GET', `/pipelines/${id}`)).body.actions as Body['actions']
    const added = await t.req('PUT', `/pipelines/${id}`, {
      body: {
        actions: [
          shown[0]!,
          { ...shown[1]!, next: ['h2'] },
          {
            id: 'h2',
            type: 'webhook',
            properties: { name: 'Second', url: 'https://hooks.example.com/y' },
            next: [],
          },
        ],
      },
    })
    assert.equal(added.status, 200, added.text)
    const saved = (await findPipeline(t.ctx.db, t.account.id, id))?.actions
    assert.deepEqual(
      saved?.map((n) => [n.id, n.properties.url ?? n.properties.fields]),
      [
        ['e1', stored],
        ['h1', privateHook.url],
        ['h2', 'https://hooks.example.com/y'],
      ],
    )
  })

  it('soft-deletes: later reads answer 404, the row stays', async () => {
    const { id } = (await t.req('POST', '/pipelines', { body: welcome() })).body
    assert.deepEqual((await t.req('DELETE', `/pipelines/${id}`)).body, { deleted: true })
    for (const [method, path] of [
      ['GET', `/pipelines/${id}`],
      ['GET', `/pipelines/${id}/actions`],
      ['GET', `/pipelines/${id}/actions/m1`],
      ['PUT', `/pipelines/${id}`],
      ['DELETE', `/pipelines/${id}`],
    ] as const) {
      const res = await t.req(method, path, method === 'PUT' ? { body: { name: 'x' } } : {})
      assert.equal(res.status, 404, `${method} ${path}`)
      assert.equal(typeof res.body.message, 'string')
    }
    assert.ok(
      !(await t.req('GET', '/pipelines')).body.some((x: { id: number }) => x.id === id),
      'expected: !(await t.req("GET", "/pipelines")).body.some((x: { id: number }) => x.id === id',
    )
    assert.ok(
      await findPipeline(t.ctx.db, t.account.id, id).then((r) => r === undefined),
      'expected: await findPipeline(t.ctx.db, t.account.id, id).then((r) => r === undefined)',
    )
  })

  it("hides another account's pipelines and refuses its lists and templates", async () => {
    const { id } = (await t.req('POST', '/pipelines', { body: welcome() })).body
    for (const path of [`/pipelines/${id}`, `/pipelines/${id}/actions`, `/pipelines/${id}/actions/m1`]) {
      const res = await t.req('GET', path, { key: other.key })
      assert.equal(res.status, 404)
      assert.deepEqual(Object.keys(res.body), ['message'])
    }
    assert.equal((await t.req('DELETE', `/pipelines/${id}`, { key: other.key })).status, 404)
    assert.deepEqual((await t.req('GET', '/pipelines', { key: other.key })).body, [])
    assert.equal((await t.req('GET', '/pipelines/999999')).status, 404)
    assert.equal((await t.req('GET', '/pipelines', { key: null })).status, 401)

    const body = welcome()
    body.list_id = otherList
    body.actions[0]!.properties = { name: 'x', template: otherTemplate }
    const res = await t.req('POST', '/pipelines', { body })
    assert.equal(res.status, 422)
    assert.deepEqual(Object.keys(res.body.errors).sort(), ['actions.0.properties.template', 'list_id'])
  })

  /** Each class of refusal, with the path it must name. */
  const refusals: [string, (b: Body) => unknown, string][] = [
    ['unknown type', (b) => (b.actions[3]!.type = 'fly'), 'actions.3.type'],
    ['duplicate id', (b) => (b.actions[3]!.id = 'm1'), 'actions.3.id'],
    ['dangling id', (b) => (b.actions[2]!.next = { yes: ['t1'], no: ['ghost'] }), 'actions.2.next.no.0'],
    ['unknown start', (b) => Object.assign(b, { start: 'ghost' }), 'start'],
    ['wrong port', (b) => (b.actions[2]!.next = { yes: ['t1'], maybe: ['m2'] }), 'actions.2.next.maybe'],
    ['array on a check', (b) => (b.actions[2]!.next = ['t1']), 'actions.2.next'],
    ['object on a tag', (b) => (b.actions[3]!.next = { default: ['e1'] }), 'actions.3.next'],
    [
      'missing template',
      (b) => (b.actions[0]!.properties = { name: 'x', template: 999999 }),
      'actions.0.properties.template',
    ],
    [
      'wait of zero',
      (b) => (b.actions[1]!.properties = { name: 'w', value: 0, unit: 'days' }),
      'actions.1.properties.value',
    ],
    [
      'bad condition',
      (b) => (b.actions[2]!.properties = { name: 'c', condition: { opened: 'w1' } }),
      'actions.2.properties.condition.opened',
    ],
    ['empty tag', (b) => (b.actions[3]!.properties = { name: 't', tag: ' ' }), 'actions.3.properties.tag'],
    ['unreachable node', (b) => (b.actions[2]!.next = { yes: ['e1'], no: ['m2'] }), 'actions.3'],
    ['cycle without a wait', (b) => (b.actions[3]!.next = ['c1']), 'actions.3.next.0'],
    ['unknown list', (b) => (b.list_id = 999999), 'list_id'],
    ['trigger without tag', (b) => Object.assign(b, { trigger: { type: 'tag' } }), 'trigger.tag'],
    [
      'subscribe node to a foreign list',
      (b) =>
        (b.actions[3] = {
          id: 't1',
          type: 'subscribe',
          properties: { name: 's', list_id: otherList },
          next: ['e1'],
        }),
      'actions.3.properties.list_id',
    ],
    [
      'trigger node to no pipeline',
      (b) =>
        (b.actions[3] = {
          id: 't1',
          type: 'trigger',
          properties: { name: 's', pipeline_id: 999999 },
          next: ['e1'],
        }),
      'actions.3.properties.pipeline_id',
    ],
    [
      'webhook to ftp',
      (b) =>
        (b.actions[3] = {
          id: 't1',
          type: 'webhook',
          properties: { name: 's', url: 'ftp://x.cz/' },
          next: ['e1'],
        }),
      'actions.3.properties.url',
    ],
  ]
  for (const [what, spoil, path] of refusals) {
    it(`refuses ${what} with 422 naming ${path}`, async () => {
      const body = welcome()
      spoil(body)
      const res = await t.req('POST', '/pipelines', { body })
      assert.equal(res.status, 422, JSON.stringify(res.body))
      assert.ok(res.body.errors[path], `expected ${path} in ${JSON.stringify(res.body.errors)}`)
      assert.ok(
        res.body.errors[path].every((m: unknown) => typeof m === 'string'),
        'expected: res.body.errors[path].every((m: unknown) => typeof m === "string")',
      )
    })
  }

  it('accepts a loop through a wait, a trigger to a pipeline of the account, and the list of a node', async () => {
    const { id: target } = (await t.req('POST', '/pipelines', { body: welcome() })).body
    const body = {
      name: 'Loop',
      list_id: listId,
      trigger: { type: 'api' },
      actions: [
        { id: 'a', type: 'subscribe', properties: { name: 'a', list_id: list2 }, next: ['b'] },
        { id: 'b', type: 'wait', properties: { name: 'b', value: '1', unit: 'hours' }, next: ['c'] },
        { id: 'c', type: 'trigger', properties: { name: 'c', pipeline_id: target }, next: ['b'] },
      ],
    }
    const res = await t.req('POST', '/pipelines', { body })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.actions[1].properties.value, 1)
  })

  it('takes the shapes PHP clients send: [] for empty properties, numbers as strings', async () => {
    const body = {
      name: 'PHP',
      list_id: String(listId),
      actions: [
        { id: 1, type: 'note', properties: [], next: ['2'] },
        { id: '2', type: 'end', properties: [], next: [] },
      ],
    }
    const res = await t.req('POST', '/pipelines', { body })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.list_id, listId)
    assert.equal(res.body.start, '1')
    assert.deepEqual(res.body.actions[0], {
      id: '1',
      type: 'note',
      properties: { name: 'note' },
      next: ['2'],
    })
  })

  it('refuses a body that is not a pipeline at all', async () => {
    const res = await t.req('POST', '/pipelines', { body: {} })
    assert.equal(res.status, 422)
    assert.ok(
      res.body.errors.name && res.body.errors.list_id && res.body.errors.actions,
      'expected: res.body.errors.name && res.body.errors.list_id && res.body.errors.actions',
    )
  })
})
