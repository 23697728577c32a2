import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { queryRows } from '../../core/db/sql.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { activePipelinesFor } from '../pipelines/index.js'
import { createEngine } from './engine.js'
import { DATE_CATCHUP_DAYS, DATE_RESCAN_MS, daysToScan, monthDaysOn } from './triggers.js'
import {
  createList,
  createPipeline,
  DAY,
  mailsTo,
  node,
  runsOf,
  settle,
  subscribe,
  startAutomationApp,
} from './automations.test-helpers.js'

const sink = await startSmtpSink()

/** A pipeline that only notes and ends, so a test counts the runs a trigger starts. */
const passThrough = [node('n', 'note', {}, ['e']), node('e', 'end')]

describe('automation triggers', async () => {
  const { t, clock } = await startAutomationApp(sink)
  const listId = await createList(t)
  const emails = async (pipelineId: number) => (await runsOf(t, pipelineId)).map((r) => r.email)

  it('POST /pipelines/{id}/trigger starts a run; once answers the earlier run; repeat starts another', async () => {
    const once = await createPipeline(t, listId, passThrough, { trigger: { type: 'api' } })
    const repeat = await createPipeline(t, listId, passThrough, {
      trigger: { type: 'api' },
      reentry: 'repeat',
    })
    await subscribe(t, listId, 'api@example.cz', {}, { trigger_autoresponders: false })
    const first = await t.req('POST', `/pipelines/${once}/trigger`, { body: { email: ' API@example.cz ' } })
    assert.equal(first.status, 200)
    assert.equal(first.body.success, true)
    assert.match(first.body.trigger_id, /^\d+$/)
    const again = await t.req('POST', `/pipelines/${once}/trigger`, { body: { email: 'api@example.cz' } })
    assert.deepEqual(again.body, first.body)
    const r1 = await t.req('POST', `/pipelines/${repeat}/trigger`, { body: { email: 'api@example.cz' } })
    const r2 = await t.req('POST', `/pipelines/${repeat}/trigger`, { body: { email: 'api@example.cz' } })
    assert.notEqual(r1.body.trigger_id, r2.body.trigger_id)
    await settle(t)
    const runs = await runsOf(t, once)
    assert.deepEqual(
      runs.map((r) => [String(r.id), r.status]),
      [[first.body.trigger_id, 'ended']],
    )

    const stranger = await t.req('POST', `/pipelines/${once}/trigger`, { body: { email: 'who@example.cz' } })
    assert.deepEqual(
      [stranger.status, stranger.body],
      [404, { errors: ['Subscriber not found in this list'] }],
    )
    // A member who is not subscribed starts no run, and is told so rather than that they are not in the list.
    await subscribe(t, listId, 'left@example.cz', { status: 2 }, { trigger_autoresponders: false })
    const left = await t.req('POST', `/pipelines/${repeat}/trigger`, { body: { email: 'left@example.cz' } })
    assert.deepEqual(
      [left.status, left.body.errors],
      [
        404,
        [
          'Subscriber is in this list but not subscribed (status 2): automations start only for subscribed members',
        ],
      ],
    )
    assert.deepEqual(await emails(repeat), ['api@example.cz', 'api@example.cz'])
    const malformed = await t.req('POST', `/pipelines/${once}/trigger`, { body: { email: 'not-an-address' } })
    assert.equal(malformed.status, 422)
    assert.deepEqual(malformed.body, { errors: { email: ['The email must be a valid email address.'] } })
    const missing = await t.req('POST', `/pipelines/999999/trigger`, { body: { email: 'api@example.cz' } })
    assert.equal(missing.status, 404)
    assert.equal(typeof missing.body.message, 'string')
    const other = await t.createAccount()
    const foreign = await t.req('POST', `/pipelines/${once}/trigger`, {
      key: other.key,
      body: { email: 'api@example.cz' },
    })
    assert.equal(foreign.status, 404)
  })

  it('tracker events and purchases start the pipelines whose trigger matches', async () => {
    const cart = await createPipeline(t, listId, passThrough, {
      trigger: { type: 'event', category: 'cart', action: 'abandon' },
    })
    const anyEvent = await createPipeline(t, listId, passThrough, { trigger: { type: 'event' } })
    const eshop = await createPipeline(t, listId, passThrough, {
      trigger: { type: 'purchase', shop: 'eshop' },
    })
    const otherShop = await createPipeline(t, listId, passThrough, {
      trigger: { type: 'purchase', shop: 'other' },
    })
    await subscribe(t, listId, 'buyer@example.cz', {}, { trigger_autoresponders: false })
    const ev = await t.req('POST', '/tracker/events', {
      body: { event: { email: 'buyer@example.cz', category: 'cart', action: 'abandon' } },
    })
    assert.equal(ev.status, 200)
    await t.req('POST', '/tracker/events', {
      body: { event: { email: 'buyer@example.cz', category: 'page', action: 'view' } },
    })
    const tr = await t.req('POST', '/tracker/transaction', {
      body: { transaction: { order_id: 'o-1', email: 'buyer@example.cz', shop: 'eshop', amount: 10 } },
    })
    assert.equal(tr.status, 200)
    await settle(t)
    assert.deepEqual(await emails(cart), ['buyer@example.cz'])
    // once: the second event finds the run of the first
    assert.deepEqual(await emails(anyEvent), ['buyer@example.cz'])
    assert.deepEqual(await emails(eshop), ['buyer@example.cz'])
    assert.deepEqual(await emails(otherShop), [])
  })

  it('a tag added by subscribe, update-subscriber or the bulk update starts tag pipelines', async () => {
    const hot = await createPipeline(t, listId, passThrough, {
      trigger: { type: 'tag', tag: 'hot' },
      reentry: 'repeat',
    })
    await subscribe(t, listId, 'tag1@example.cz', { tags: ['hot'] }, { trigger_autoresponders: false })
    await subscribe(t, listId, 'tag2@example.cz', {}, { trigger_autoresponders: false })
    const upd = await t.req('PUT', `/lists/${listId}/update-subscriber`, {
      body: { email: 'tag2@example.cz', subscriber_data: { tags: ['hot'] } },
    })
    assert.equal(upd.status, 200)
    await subscribe(t, listId, 'tag3@example.cz', {}, { trigger_autoresponders: false })
    const bulk = await t.req('PUT', `/lists/${listId}/update-subscribers-bulk`, {
      body: { subscriber_data: [{ email: 'tag3@example.cz', tags: ['hot'] }] },
    })
    assert.equal(bulk.status, 200, bulk.text)
    // Already tagged: nothing is added, nothing starts.
    await t.req('PUT', `/lists/${listId}/update-subscriber`, {
      body: { email: 'tag1@example.cz', subscriber_data: { tags: ['hot', 'x'] } },
    })
    await settle(t)
    assert.deepEqual((await emails(hot)).sort(), ['tag1@example.cz', 'tag2@example.cz', 'tag3@example.cz'])
  })

  it("an account's pipelines are read once for a batch of signals, not again for each signal", async () => {
    // The consumer keeps this answer for its batch and awaits it once per signal; as a query builder (a
    // thenable) it ran its statement at every await, a thousand times a batch, and saw pipelines made since.
    const kept = activePipelinesFor(t.ctx.db, t.account.id, 'purchase')
    const before = (await kept).length
    await createPipeline(t, listId, passThrough, { trigger: { type: 'purchase', shop: 'no-such-shop' } })
    assert.equal((await activePipelinesFor(t.ctx.db, t.account.id, 'purchase')).length, before + 1)
    assert.equal((await kept).length, before)
  })

  it('a consumed signal leaves the outbox, and a later round does not act on it again', async () => {
    const vip = await createPipeline(t, listId, passThrough, {
      trigger: { type: 'tag', tag: 'vip' },
      reentry: 'repeat',
    })
    await subscribe(t, listId, 'vip@example.cz', { tags: ['vip'] }, { trigger_autoresponders: false })
    await settle(t)
    assert.deepEqual(await emails(vip), ['vip@example.cz'])
    const left = await queryRows<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM signals WHERE email = 'vip@example.cz'`,
    )
    assert.equal(left[0]!.n, 0)
    await createEngine(t.ctx).runOnce()
    assert.deepEqual(await emails(vip), ['vip@example.cz'])
  })

  it('subscribe-bulk starts subscribe pipelines only with trigger_autoresponders, for new subscribers', async () => {
    const bulkList = await createList(t, { name: 'Bulk' })
    const welcome = await createPipeline(t, bulkList, passThrough)
    const tagged = await createPipeline(t, bulkList, passThrough, { trigger: { type: 'tag', tag: 'imp' } })
    const without = await t.req('POST', `/lists/${bulkList}/subscribe-bulk`, {
      body: { subscriber_data: [{ email: 'b1@example.cz', tags: ['imp'] }] },
    })
    assert.equal(without.status, 200)
    const withFlag = await t.req('POST', `/lists/${bulkList}/subscribe-bulk`, {
      body: {
        subscriber_data: [
          { email: 'b1@example.cz' },
          { email: 'b2@example.cz' },
          { email: 'b3@example.cz', status: 2 },
        ],
        trigger_autoresponders: true,
      },
    })
    assert.equal(withFlag.status, 200)
    await settle(t)
    assert.deepEqual(await emails(welcome), ['b2@example.cz'])
    assert.deepEqual(await emails(tagged), ['b1@example.cz'])
  })

  it('on a double opt-in list the run starts at confirmation, not at the unconfirmed subscribe', async () => {
    const doi = await createList(t, {
      name: 'DOI',
      double_optin: true,
      conf_subject: 'Confirm',
      conf_message: '<p><a href="*|CONFIRM|*">Confirm</a></p>',
    })
    const welcome = await createPipeline(t, doi, passThrough)
    await subscribe(t, doi, 'doi@example.cz')
    await settle(t)
    assert.deepEqual(await emails(welcome), [])
    const [mail] = await mailsTo(sink, 'doi@example.cz', 1)
    const link = /\/confirm\/[^"'\s<]+/.exec(String(mail!.parsed.html))![0]
    const click = await t.req('GET', link, { key: null })
    assert.ok(click.status < 400, `confirm answered ${click.status}`)
    await settle(t)
    assert.deepEqual(await emails(welcome), ['doi@example.cz'])
  })

  it('a date field starts a run on its month-day, once per pipeline, contact and year', async () => {
    const bday = await createPipeline(t, listId, passThrough, {
      trigger: { type: 'date', field: 'birthday' },
      reentry: 'repeat',
    })
    const custom = await createPipeline(t, listId, passThrough, { trigger: { type: 'date', field: 'anniv' } })
    const tomorrow = new Date(clock.now().getTime() + DAY).toISOString().slice(5, 10)
    await subscribe(
      t,
      listId,
      'bday@example.cz',
      { birthday: `1990-${tomorrow}` },
      { trigger_autoresponders: false },
    )
    await subscribe(
      t,
      listId,
      'anniv@example.cz',
      { custom_fields: { anniv: `2001-${tomorrow}` } },
      { trigger_autoresponders: false },
    )
    await subscribe(
      t,
      listId,
      'other@example.cz',
      { birthday: '1990-01-01' },
      { trigger_autoresponders: false },
    )
    await settle(t)
    assert.deepEqual(await emails(bday), [])
    clock.advance(DAY)
    await settle(t)
    assert.deepEqual(await emails(bday), ['bday@example.cz'])
    assert.deepEqual(await emails(custom), ['anniv@example.cz'])
    // Another scan the same day (a restarted worker) starts nothing more.
    await createEngine(t.ctx).runOnce()
    assert.deepEqual(await emails(bday), ['bday@example.cz'])
    clock.advance(365 * DAY)
    // Workers scanning the new day at once start one run between them (on PostgreSQL they really overlap).
    await Promise.all([1, 2, 3].map(() => createEngine(t.ctx).runOnce()))
    await settle(t)
    assert.deepEqual(await emails(bday), ['bday@example.cz', 'bday@example.cz'])
    // once re-entry: never a second year
    assert.deepEqual(await emails(custom), ['anniv@example.cz'])
  })

  it("a member who joins on their date's day, or a date pipeline made that day, starts within a rescan", async () => {
    const today = clock.now().toISOString().slice(5, 10)
    const early = await createPipeline(t, listId, passThrough, {
      trigger: { type: 'date', field: 'birthday' },
    })
    await settle(t)
    await subscribe(
      t,
      listId,
      'joined@example.cz',
      { birthday: `1985-${today}` },
      { trigger_autoresponders: false },
    )
    await settle(t)
    const joined = async (p: number) => (await emails(p)).filter((e) => e === 'joined@example.cz')
    assert.deepEqual(await joined(early), [])
    clock.advance(DATE_RESCAN_MS)
    await settle(t)
    assert.deepEqual(await joined(early), ['joined@example.cz'])
    const late = await createPipeline(t, listId, passThrough, {
      trigger: { type: 'date', field: 'birthday' },
    })
    clock.advance(DATE_RESCAN_MS)
    await settle(t)
    assert.deepEqual(await joined(late), ['joined@example.cz'])
  })

  it('28 February takes the 29th only in a year without one (the Gregorian rule)', () => {
    assert.deepEqual(monthDaysOn('2031-02-28'), ['02-28', '02-29'])
    assert.deepEqual(monthDaysOn('2100-02-28'), ['02-28', '02-29'])
    assert.deepEqual(monthDaysOn('2032-02-28'), ['02-28'])
    assert.deepEqual(monthDaysOn('2000-02-28'), ['02-28'])
    assert.deepEqual(monthDaysOn('2032-02-29'), ['02-29'])
    assert.deepEqual(monthDaysOn('2031-03-01'), ['03-01'])
  })

  it('a leap-day date starts its run on 28 February of a year without a 29th, once', async () => {
    assert.ok(
      clock.now() < new Date('2031-02-27T00:00:00Z'),
      'the clock must be before the days this test sets',
    )
    const leap = await createPipeline(t, listId, passThrough, {
      trigger: { type: 'date', field: 'birthday' },
      reentry: 'repeat',
    })
    const leapers = async () => (await emails(leap)).filter((e) => e.startsWith('leap'))
    await subscribe(
      t,
      listId,
      'leap@example.cz',
      { birthday: '2000-02-29' },
      { trigger_autoresponders: false },
    )
    await subscribe(
      t,
      listId,
      'leap28@example.cz',
      { birthday: '2000-02-28' },
      { trigger_autoresponders: false },
    )
    clock.set(new Date('2031-02-27T12:00:00Z'))
    await settle(t)
    assert.deepEqual(await leapers(), [])
    clock.set(new Date('2031-02-28T12:00:00Z'))
    await settle(t)
    assert.deepEqual((await leapers()).sort(), ['leap28@example.cz', 'leap@example.cz'])
    clock.set(new Date('2031-03-01T12:00:00Z'))
    await settle(t)
    assert.equal((await leapers()).length, 2)
  })
  it('days missed while no worker ran are scanned on return: three back at most, within the year', () => {
    assert.equal(DATE_CATCHUP_DAYS, 3)
    assert.deepEqual(daysToScan(undefined, '2031-06-15'), ['2031-06-15'], 'never scanned: today only')
    assert.deepEqual(daysToScan('2031-06-15', '2031-06-15'), ['2031-06-15'])
    assert.deepEqual(daysToScan('2031-06-14', '2031-06-15'), ['2031-06-15'])
    assert.deepEqual(daysToScan('2031-06-12', '2031-06-15'), ['2031-06-13', '2031-06-14', '2031-06-15'])
    assert.deepEqual(daysToScan('2031-06-01', '2031-06-15'), [
      '2031-06-12',
      '2031-06-13',
      '2031-06-14',
      '2031-06-15',
    ])
    assert.deepEqual(daysToScan('2030-12-29', '2031-01-02'), ['2031-01-01', '2031-01-02'], 'not last year')
    assert.deepEqual(daysToScan('2031-02-27', '2031-03-01'), ['2031-02-28', '2031-03-01'])
  })

  it('a worker back after whole days down greets the dates it missed, not those of later members', async () => {
    assert.ok(
      clock.now() < new Date('2031-06-10T00:00:00Z'),
      'the clock must be before the days this test sets',
    )
    // Made before the clock reaches 10 June: a scan of that day, this app's own worker's or settle's, includes it.
    const bday = await createPipeline(t, listId, passThrough, {
      trigger: { type: 'date', field: 'birthday' },
      reentry: 'repeat',
    })
    clock.set(new Date('2031-06-10T12:00:00Z'))
    const greeted = async () => (await emails(bday)).filter((e) => e.startsWith('down-')).sort()
    const member = (name: string, monthDay: string) =>
      subscribe(
        t,
        listId,
        `down-${name}@example.cz`,
        { birthday: `1990-${monthDay}` },
        { trigger_autoresponders: false },
      )
    // Named by their birthday's day in June.
    for (const day of ['11', '12', '14', '15']) await member(day, `06-${day}`)
    await settle(t)
    assert.deepEqual(await greeted(), [], 'scanned on 10 June: nobody')
    // No worker from 10 June to 15 June; the API took a member on the 14th, after their birthday. Written as of
    // that day here: with the clock on the 14th, this app's own worker could scan it before the member came.
    await member('late', '06-13')
    await t.ctx.db.execute(
      sql`UPDATE memberships SET subscribed_at = '2031-06-14T08:00:00Z'
          WHERE list_id = ${listId}
            AND contact_id IN (SELECT id FROM contacts WHERE email = 'down-late@example.cz')`,
    )
    clock.set(new Date('2031-06-15T09:00:00Z'))
    await settle(t)
    assert.deepEqual(await greeted(), ['down-12@example.cz', 'down-14@example.cz', 'down-15@example.cz'])
    // Back to the rhythm: the next day scans that day only.
    clock.set(new Date('2031-06-16T09:00:00Z'))
    await settle(t)
    assert.equal((await greeted()).length, 3)
  })
})
