import { before, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp } from '../../../test/helpers/app.js'
import type { Condition } from '../pipelines/index.js'
import {
  at,
  contactId,
  createListWith,
  insertMail,
  insertPurchase,
  insertRun,
  insertTrackerEvent,
} from './automation-stats.test-helpers.js'
import { evaluateCondition, evaluateConditionBatch, type ConditionSubject } from './conditions.js'

const NOW = at('2026-03-20T12:00:00.000Z')
const RUN_START = at('2026-03-10T08:00:00.000Z')
const DAY = 86_400_000
const PIPELINE = 77

describe('evaluateCondition: every operator of contract §6, one statement per check', async () => {
  const t = await startTestApp({ worker: false })
  const other = await t.createAccount()
  let anna: ConditionSubject
  let bob: ConditionSubject
  let ghost: ConditionSubject
  let listMain = 0
  let listSecond = 0

  before(async () => {
    listMain = await createListWith(t, 'Main', [
      {
        email: 'anna@x.cz',
        name: 'Anna',
        city: 'Praha',
        company: 'Acme',
        zip: '01234',
        birthday: '1990-05-01',
        tags: ['vip', 'new'],
        custom_fields: { age: 30, score: '9', size: { value: 'M', type: 'string' } },
      },
      { email: 'bob@x.cz', name: 'Bob', city: 'Brno', custom_fields: { age: '45', score: '10' } },
    ])
    listSecond = await createListWith(t, 'Second', [{ email: 'bob@x.cz', status: 2 }])
    // The same address in another account, with a purchase and an event: never seen from ours.
    await createListWith(t, 'Theirs', [{ email: 'bob@x.cz', tags: ['vip'] }], other.key)
    const a = await contactId(t, t.account.id, 'anna@x.cz')
    const b = await contactId(t, t.account.id, 'bob@x.cz')
    const theirBob = await contactId(t, other.id, 'bob@x.cz')

    const mail = (
      actionId: string,
      createdAt: Date,
      opened: boolean,
      clicked: boolean,
      pipelineId = PIPELINE,
    ) =>
      insertMail(t, {
        accountId: t.account.id,
        pipelineId,
        actionId,
        email: 'anna@x.cz',
        contactId: a,
        createdAt,
        ...(opened ? { firstOpenAt: new Date(createdAt.getTime() + 1000) } : {}),
        ...(clicked ? { firstClickAt: new Date(createdAt.getTime() + 2000) } : {}),
      })
    // This run's mail (recorded in its state, as the engine records it): m1 opened and clicked, m2 sent but
    // untouched.
    const m1 = await mail('m1', at('2026-03-10T08:00:00.000Z'), true, true)
    const m2 = await mail('m2', at('2026-03-11T08:00:00.000Z'), false, false)
    // m3 opened, but by a run before this one; m2 opened, but in another pipeline; m4 opened, sent by a later
    // run of a repeating pipeline while this one never passed m4.
    await mail('m3', at('2026-03-01T08:00:00.000Z'), true, true)
    await mail('m2', at('2026-03-12T08:00:00.000Z'), true, true, PIPELINE + 1)
    await mail('m4', at('2026-03-12T09:00:00.000Z'), true, true)
    const annaRun = await insertRun(t, {
      accountId: t.account.id,
      pipelineId: PIPELINE,
      email: 'anna@x.cz',
      contactId: a,
      startedAt: RUN_START,
      state: { mail: { m1: m1.id, m2: m2.id } },
    })
    anna = { accountId: t.account.id, runId: annaRun, contactId: a, email: 'anna@x.cz' }

    // Bob's run knows its mail by id (state.mail), a row stamped by a clock behind the run's.
    const bobMail = await insertMail(t, {
      accountId: t.account.id,
      pipelineId: PIPELINE,
      actionId: 'm1',
      email: 'bob@x.cz',
      contactId: b,
      createdAt: at('2026-03-09T00:00:00.000Z'),
      firstClickAt: at('2026-03-12T00:00:00.000Z'),
    })
    const bobRun = await insertRun(t, {
      accountId: t.account.id,
      pipelineId: PIPELINE,
      email: 'bob@x.cz',
      contactId: b,
      startedAt: RUN_START,
      state: { mail: { m1: bobMail.id } },
    })
    bob = { ...anna, runId: bobRun, contactId: b, email: 'bob@x.cz' }
    // The same node's mail to Bob from another run of a repeating pipeline, started after his, opened there.
    await insertMail(t, {
      accountId: t.account.id,
      pipelineId: PIPELINE,
      actionId: 'm1',
      email: 'bob@x.cz',
      contactId: b,
      createdAt: at('2026-03-13T00:00:00.000Z'),
      firstOpenAt: at('2026-03-13T01:00:00.000Z'),
    })
    ghost = { ...anna, runId: 0, contactId: null, email: 'ghost@x.cz' }

    await insertPurchase(t, t.account.id, 'o1', 'anna@x.cz', 10, new Date(NOW.getTime() - 10 * DAY))
    await insertPurchase(t, t.account.id, 'o2', 'anna@x.cz', 10, new Date(NOW.getTime() + DAY)) // after now
    await insertPurchase(t, t.account.id, 'o3', 'ghost@x.cz', 10, new Date(NOW.getTime() - DAY))
    await insertPurchase(t, other.id, 'o4', 'bob@x.cz', 10, new Date(NOW.getTime() - DAY))
    await insertTrackerEvent(t, t.account.id, a, 'cart', 'add')
    await insertTrackerEvent(t, other.id, theirBob, 'cart', 'add')
  })

  const check = (s: ConditionSubject, c: unknown) => evaluateCondition(t.ctx.db, s, c as Condition, NOW)
  const expect = async (s: ConditionSubject, c: unknown, want: boolean, why = '') =>
    assert.equal(await check(s, c), want, `${s.email} ${JSON.stringify(c)} ${why}`)

  it('field eq / neq over columns and custom fields', async () => {
    await expect(anna, { field: 'name', op: 'eq', value: 'Anna' }, true)
    await expect(anna, { field: 'Name', op: 'eq', value: 'anna' }, false)
    await expect(anna, { field: 'email', op: 'eq', value: 'ANNA@x.cz' }, true)
    await expect(anna, { field: 'size', op: 'eq', value: 'M' }, true)
    await expect(anna, { field: 'zip', op: 'eq', value: '01234' }, true)
    await expect(bob, { field: 'age', op: 'eq', value: 45 }, true)
    await expect(anna, { field: 'city', op: 'neq', value: 'Praha' }, false)
    await expect(bob, { field: 'city', op: 'neq', value: 'Praha' }, true)
    await expect(bob, { field: 'company', op: 'neq', value: 'Acme' }, true, 'no company: neq holds')
  })

  it('field contains, gt, lt: numbers numerically when both sides are numeric', async () => {
    await expect(anna, { field: 'city', op: 'contains', value: 'RAH' }, true)
    await expect(bob, { field: 'city', op: 'contains', value: 'rah' }, false)
    await expect(anna, { field: 'age', op: 'gt', value: 20 }, true)
    await expect(anna, { field: 'age', op: 'lt', value: 20 }, false)
    // '10' > '9' as numbers (as text it would not be).
    await expect(bob, { field: 'score', op: 'gt', value: '9' }, true)
    await expect(anna, { field: 'score', op: 'lt', value: '10' }, true)
    await expect(anna, { field: 'birthday', op: 'gt', value: '1990-01-01' }, true)
    await expect(anna, { field: 'birthday', op: 'lt', value: '1990-01-01' }, false)
  })

  it('field exists, and exists false', async () => {
    await expect(anna, { field: 'company', op: 'exists' }, true)
    await expect(bob, { field: 'company', op: 'exists' }, false)
    await expect(bob, { field: 'company', op: 'exists', value: false }, true)
    await expect(anna, { field: 'size', op: 'exists' }, true)
    await expect(bob, { field: 'size', op: 'exists' }, false)
  })

  it('tag and in_list, within the account only', async () => {
    await expect(anna, { tag: 'vip' }, true)
    await expect(bob, { tag: 'vip' }, false)
    await expect(anna, { in_list: listMain }, true)
    await expect(bob, { in_list: listSecond }, false, 'unsubscribed there')
    await expect(anna, { in_list: listSecond }, false)
  })

  it("opened / clicked: this run's mail from that node of this pipeline", async () => {
    await expect(anna, { opened: 'm1' }, true)
    await expect(anna, { clicked: 'm1' }, true)
    await expect(anna, { opened: 'm2' }, false, 'not opened here; opened in another pipeline')
    await expect(anna, { opened: 'm3' }, false, 'opened in an earlier run')
    await expect(anna, { clicked: 'm4' }, false, "another run's mail from a node this run never passed")
    await expect(anna, { opened: 'nope' }, false)
    await expect(bob, { clicked: 'm1' }, true, 'found through state.mail')
    await expect(bob, { opened: 'm1' }, false, "another run's mail from that node was opened, not this run's")
  })

  it('purchased within the last N days of now, by address', async () => {
    await expect(anna, { purchased: { days: 30 } }, true)
    await expect(anna, { purchased: { days: 5 } }, false, 'one is older, one after now')
    await expect(bob, { purchased: { days: 30 } }, false, "the other account's purchase")
    await expect(ghost, { purchased: { days: 2 } }, true, 'no contact needed')
  })

  it('event by category and/or action', async () => {
    await expect(anna, { event: { category: 'cart' } }, true)
    await expect(anna, { event: { category: 'cart', action: 'add' } }, true)
    await expect(anna, { event: { action: 'add' } }, true)
    await expect(anna, { event: { category: 'cart', action: 'remove' } }, false)
    await expect(bob, { event: { category: 'cart' } }, false, "the other account's event")
  })

  it('all / any / not, two-valued even without a contact', async () => {
    const vip = { tag: 'vip' }
    const praha = { field: 'city', op: 'eq', value: 'Praha' }
    await expect(anna, { all: [vip, praha, { opened: 'm1' }] }, true)
    await expect(anna, { all: [vip, { not: praha }] }, false)
    await expect(bob, { any: [vip, praha] }, false)
    await expect(bob, { any: [vip, { clicked: 'm1' }] }, true)
    await expect(bob, { not: { any: [vip, praha] } }, true)
    await expect(ghost, { not: praha }, true)
    await expect(ghost, praha, false)
    await expect(ghost, { not: { tag: 'vip' } }, true)
    await expect(ghost, { all: [] }, true)
    await expect(ghost, { any: [] }, false)
  })

  it('a malformed leaf is false, never an error', async () => {
    await expect(anna, { field: 'city', op: 'like', value: 'x' }, false)
    await expect(anna, { bogus: 1 }, false)
    await expect(anna, { not: { bogus: 1 } }, true)
    await expect(anna, { in_list: 'x' }, false)
    await expect(anna, { purchased: { days: 'x' } }, false)
  })

  it('a batch of runs in one statement answers as each run alone does', async () => {
    const runs = [anna, bob, ghost]
    const batch = (c: unknown) => evaluateConditionBatch(t.ctx.db, runs, c as Condition, NOW)
    assert.deepEqual([...(await batch({ tag: 'vip' }))], [anna.runId])
    assert.deepEqual([...(await batch({ opened: 'm1' }))], [anna.runId])
    assert.deepEqual([...(await batch({ clicked: 'm1' }))].sort(), [anna.runId, bob.runId].sort())
    assert.deepEqual([...(await batch({ purchased: { days: 30 } }))].sort(), [anna.runId, ghost.runId].sort())
    for (const c of [
      { not: { field: 'city', op: 'eq', value: 'Praha' } },
      { any: [{ tag: 'vip' }, { clicked: 'm1' }] },
      { all: [{ opened: 'm1' }, { in_list: listMain }] },
      { event: { category: 'cart' } },
      { in_list: listSecond },
    ]) {
      const alone = new Set<number>()
      for (const r of runs) if (await check(r, c)) alone.add(r.runId)
      assert.deepEqual([...(await batch(c))].sort(), [...alone].sort(), JSON.stringify(c))
    }
  })
})
