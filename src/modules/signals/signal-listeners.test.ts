import fs from 'node:fs'
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { createListeningPipeline } from '../../../test/helpers/listening-pipeline.js'
import { ManualClock } from '../../core/clock.js'
import { queryRows } from '../../core/db/sql.js'

/** Signals are written only for kinds an active automation of the account listens for. */
describe('signal listeners', async () => {
  const clock = new ManualClock(new Date('2026-04-01T10:00:00Z'))
  // No worker: signals stay in the outbox to be counted.
  const t = await startTestApp({ clock, worker: false })
  const other = await t.createAccount()
  const list = (await t.req('POST', '/lists', { body: { name: 'L' } })).body.id as number

  const signals = async (kind: string) =>
    (
      await queryRows<{ email: string }>(
        t.ctx.db,
        sql`SELECT email FROM signals WHERE account_id = ${t.account.id} AND kind = ${kind} ORDER BY id`,
      )
    ).map((r) => r.email)
  let n = 0
  /** A new address subscribed with a new tag, through subscribe-bulk (asking for autoresponders). */
  const tagSomeone = async () => {
    const email = `p${++n}@x.cz`
    const res = await t.req('POST', `/lists/${list}/subscribe-bulk`, {
      body: { subscriber_data: [{ email, tags: [`tag${n}`] }], trigger_autoresponders: true },
    })
    assert.equal(res.status, 200, res.text)
    return email
  }

  it('an account whose automations listen for nothing gets no signal at all', async () => {
    await tagSomeone()
    const purchase = await t.req('POST', '/tracker/transaction', {
      body: {
        transaction: { order_id: 'o1', email: 'p1@x.cz', amount: 5, timestamp: '2026-03-31 12:00:00' },
      },
    })
    assert.equal(purchase.status, 200, purchase.text)
    const event = await t.req('POST', '/tracker/events', {
      body: { event: { email: 'p1@x.cz', category: 'c' } },
    })
    assert.equal(event.status, 200, event.text)
    const all = await queryRows<{ n: number }>(
      t.ctx.db,
      sql`SELECT count(*)::int AS n FROM signals WHERE account_id = ${t.account.id}`,
    )
    assert.equal(all[0]!.n, 0)
  })

  it("another account's automation, or one listening for another kind, changes nothing", async () => {
    await createListeningPipeline(t, { type: 'tag', tag: 'x' }, other.key)
    await createListeningPipeline(t, { type: 'purchase' })
    await tagSomeone()
    assert.deepEqual(await signals('tag'), [])
  })

  it('tags are signalled while a tag automation is active, not while it is paused or once deleted', async () => {
    const id = await createListeningPipeline(t, { type: 'tag', tag: 'whatever' })
    const first = await tagSomeone()
    assert.deepEqual(await signals('tag'), [first])
    // Subscribes, asked for with trigger_autoresponders, have no listener: still none.
    assert.deepEqual(await signals('subscribe'), [])

    const paused = await t.req('PUT', `/pipelines/${id}`, { body: { status: 'paused' } })
    assert.equal(paused.status, 200, paused.text)
    await tagSomeone()
    assert.deepEqual(await signals('tag'), [first])

    assert.equal((await t.req('PUT', `/pipelines/${id}`, { body: { status: 'active' } })).status, 200)
    const again = await tagSomeone()
    assert.deepEqual(await signals('tag'), [first, again])

    assert.equal((await t.req('DELETE', `/pipelines/${id}`)).status, 200)
    await tagSomeone()
    assert.deepEqual(await signals('tag'), [first, again])
  })

  it('the migration that made the table lets the pipelines active then listen (and no other)', async () => {
    await t.ctx.db.execute(sql`DELETE FROM signal_listeners`)
    // Written straight to the table, as before the migration: a pipeline of each state and trigger.
    const rows = await queryRows<{ id: number; name: string }>(
      t.ctx.db,
      sql`INSERT INTO pipelines (account_id, name, list_id, status, trigger, start, actions, deleted_at)
          VALUES (${t.account.id}, 'tag', ${list}, 'active', '{"type":"tag","tag":"a"}', 'e1', '[]', NULL),
                 (${t.account.id}, 'paused', ${list}, 'paused', '{"type":"purchase"}', 'e1', '[]', NULL),
                 (${t.account.id}, 'deleted', ${list}, 'active', '{"type":"event"}', 'e1', '[]', now()),
                 (${t.account.id}, 'date', ${list}, 'active', '{"type":"date","field":"birthday"}', 'e1', '[]', NULL),
                 (${other.id}, 'other', ${list}, 'active', '{"type":"subscribe"}', 'e1', '[]', NULL)
          RETURNING id, name`,
    )
    const migration = fs.readFileSync(
      new URL('../../../migrations/0016_signal_listeners.sql', import.meta.url),
      'utf8',
    )
    const backfill = migration.split('--> statement-breakpoint').at(-1)!
    assert.match(backfill, /INSERT INTO "signal_listeners"/)
    await t.ctx.db.execute(sql.raw(backfill))
    const listening = await queryRows<{ pipeline_id: number; account_id: number; kind: string }>(
      t.ctx.db,
      sql`SELECT pipeline_id, account_id, kind FROM signal_listeners
          WHERE pipeline_id IN (SELECT (jsonb_array_elements_text(${JSON.stringify(rows.map((r) => r.id))}::jsonb))::int)
          ORDER BY pipeline_id`,
    )
    const id = (name: string) => rows.find((r) => r.name === name)!.id
    assert.deepEqual(listening, [
      { pipeline_id: id('tag'), account_id: t.account.id, kind: 'tag' },
      { pipeline_id: id('other'), account_id: other.id, kind: 'subscribe' },
    ])
  })
})
