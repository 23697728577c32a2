import { before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import { createListWith, insertLog } from './automation-stats.test-helpers.js'

const EMAIL = 'jana+news@example.cz'
const ISO_MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/
const ENTRY_KEYS = [
  'action_id',
  'email',
  'id',
  'next',
  'pipeline_id',
  'props',
  'timestamp',
  'trigger_id',
  'user_id',
]
const PIPELINES = [5, 3, 9]

interface Entry {
  id: number
  pipeline_id: number
  timestamp: string
  trigger_id: string
}

/**
 * 25 entries of one address: entry i (in id order) of pipeline PIPELINES[i % 3], run 100 + i, written at
 * minute (7i mod 25) with i microseconds, so time order and id order differ and the microseconds show.
 */
const minuteOf = (i: number) => (i * 7) % 25
const stamp = (i: number) =>
  `2026-02-01T10:${String(minuteOf(i)).padStart(2, '0')}:00.${String(100000 + i).padStart(6, '0')}Z`

describe('GET /subscribers/{email}/automation-log', async () => {
  const t = await startTestApp({ worker: false })
  const other = await t.createAccount()
  const ids: number[] = []

  before(async () => {
    await createListWith(t, 'News', [{ email: EMAIL }, { email: 'quiet@example.cz' }])
    for (let i = 0; i < 25; i++) {
      ids.push(
        await insertLog(t, {
          accountId: t.account.id,
          pipelineId: PIPELINES[i % 3]!,
          runId: 100 + i,
          actionId: `n${i}`,
          email: EMAIL,
          props: { type: 'tag', name: `Step ${i}`, tag: 'vip' },
          next: i % 5 === 4 ? null : [`n${i + 1}`],
          createdAt: stamp(i),
        }),
      )
    }
    // The same address in another account, and another address of ours.
    await insertLog(t, {
      accountId: other.id,
      pipelineId: 1,
      runId: 1,
      actionId: 'x',
      email: EMAIL,
      createdAt: '2026-02-01T09:00:00Z',
    })
    await insertLog(t, {
      accountId: t.account.id,
      pipelineId: 5,
      runId: 1,
      actionId: 'x',
      email: 'someone@example.cz',
      createdAt: '2026-02-01T09:00:00Z',
    })
  })

  const log = (query = '', email = EMAIL, key?: string) =>
    t.req('GET', `/subscribers/${email}/automation-log${query}`, key ? { key } : {})

  it('answers the first page newest first, in the api.md shape', async () => {
    const res = await log()
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.deepEqual(Object.keys(res.body).sort(), [
      'automation_log',
      'current_page',
      'last_page',
      'per_page',
      'total',
    ])
    assert.deepEqual(
      [res.body.current_page, res.body.per_page, res.body.total, res.body.last_page],
      [1, 20, 25, 2],
    )
    assert.equal(res.body.automation_log.length, 20)
    for (const e of res.body.automation_log) {
      assert.deepEqual(Object.keys(e).sort(), ENTRY_KEYS)
      assert.match(e.timestamp, ISO_MICRO)
    }
    // 7i mod 25 is a permutation of 0..24: the newest is the one entry written at minute 24.
    const newest = [...Array(25).keys()].reduce((a, b) => (minuteOf(b) > minuteOf(a) ? b : a))
    assert.deepEqual(res.body.automation_log[0], {
      id: ids[newest],
      user_id: t.account.id,
      pipeline_id: PIPELINES[newest % 3],
      action_id: `n${newest}`,
      trigger_id: String(100 + newest),
      email: EMAIL,
      props: { type: 'tag', name: `Step ${newest}`, tag: 'vip' },
      next: newest % 5 === 4 ? null : [`n${newest + 1}`],
      timestamp: stamp(newest),
    })
    const times = res.body.automation_log.map((e: Entry) => e.timestamp)
    assert.deepEqual(times, [...times].sort().reverse())
    assert.notDeepEqual(
      res.body.automation_log.map((e: Entry) => e.id),
      [...ids].reverse().slice(0, 20),
      'time order is not id order here',
    )
  })

  it('pages with page and per_page', async () => {
    const second = await log('?page=2')
    assert.equal(second.body.current_page, 2)
    assert.equal(second.body.automation_log.length, 5)
    const all = [...(await log()).body.automation_log, ...second.body.automation_log].map((e: Entry) => e.id)
    assert.equal(new Set(all).size, 25, 'two pages, no overlap')
    const small = await log('?per_page=10&page=3')
    assert.deepEqual(
      [small.body.per_page, small.body.last_page, small.body.automation_log.length],
      [10, 3, 5],
    )
    const beyond = await log('?page=9')
    assert.equal(beyond.status, 200)
    assert.deepEqual(beyond.body.automation_log, [])
    assert.equal(beyond.body.total, 25)
  })

  it('sorts by timestamp, id or pipeline_id in either direction, under each common name', async () => {
    const asc = (await log('?sort_by=timestamp&sort_dir=asc&per_page=100')).body.automation_log
    assert.deepEqual(
      asc.map((e: Entry) => e.timestamp),
      [...Array(25).keys()].map(stamp).sort(),
    )
    const byId = (await log('?sort_by=id&sort_dir=asc&per_page=100')).body.automation_log
    assert.deepEqual(
      byId.map((e: Entry) => e.id),
      ids,
    )
    const byIdDesc = (await log('?sort=id&per_page=100')).body.automation_log
    assert.deepEqual(
      byIdDesc.map((e: Entry) => e.id),
      [...ids].reverse(),
    )
    const byPipeline = (await log('?order_by=pipeline_id&direction=ASC&per_page=100')).body.automation_log
    const expected = ids
      .map((id, i) => ({ id, p: PIPELINES[i % 3]! }))
      .sort((a, b) => a.p - b.p || a.id - b.id)
      .map((e) => e.id)
    assert.deepEqual(
      byPipeline.map((e: Entry) => e.id),
      expected,
    )
    const pipelineDesc = (await log('?sort_by=pipeline_id&order=desc&per_page=3')).body.automation_log
    assert.deepEqual(
      pipelineDesc.map((e: Entry) => e.pipeline_id),
      [9, 9, 9],
    )
    assert.equal((await log('?sort_by=id&sort_dir=asc&direction=desc')).body.automation_log[0].id, ids[0])
  })

  it('rejects unknown sort values and per_page over 100 with 422', async () => {
    const column = await log('?sort_by=email')
    assert.equal(column.status, 422)
    assert.deepEqual(Object.keys(column.body.errors), ['sort_by'])
    const dir = await log('?sort_dir=up')
    assert.equal(dir.status, 422)
    assert.deepEqual(Object.keys(dir.body.errors), ['sort_dir'])
    const big = await log('?per_page=101')
    assert.equal(big.status, 422)
    assert.deepEqual(Object.keys(big.body.errors), ['per_page'])
    assert.equal((await log('?per_page=0')).status, 422)
    assert.equal((await log('?per_page=100')).status, 200)
  })

  it('takes the address literally with +, trimmed and lower-cased', async () => {
    const res = await log('', '%20Jana+News@Example.CZ')
    assert.equal(res.status, 200)
    assert.equal(res.body.total, 25)
  })

  it('answers a contact without runs with an empty page, a stranger with 404, per account', async () => {
    const quiet = await log('', 'quiet@example.cz')
    assert.equal(quiet.status, 200)
    assert.deepEqual(quiet.body, {
      automation_log: [],
      current_page: 1,
      per_page: 20,
      total: 0,
      last_page: 1,
    })
    const stranger = await log('', 'nobody@example.cz')
    assert.equal(stranger.status, 404)
    assert.deepEqual(Object.keys(stranger.body), ['message'])
    const theirs = await log('', EMAIL, other.key)
    assert.equal(theirs.status, 200)
    assert.equal(theirs.body.total, 1)
    assert.equal(theirs.body.automation_log[0].user_id, other.id)
    assert.equal((await log('', 'quiet@example.cz', other.key)).status, 404)
    assert.equal((await t.req('GET', `/subscribers/${EMAIL}/automation-log`, { key: null })).status, 401)
  })
})
