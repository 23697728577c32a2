/** A dead sender's claimed rows go out as soon as its lock is free, not a lease later (claimer.ts). */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { testDbKind } from '../../../test/helpers/databases.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { startCampaignSender } from '../../../test/helpers/sender.js'
import { ManualClock } from '../../core/clock.js'
import { queryRows } from '../../core/db/sql.js'
import { addDomain, baseMessage } from '../transactional/transactional.test-helpers.js'
import { CLAIMER_LOCK_SPACE, startClaimer } from './claimer.js'
import { claimQueued } from './ledger.repo.js'

// `later…` addresses are deferred (451): their rows wait, claimed, for their retry time.
/** PGlite's one connection lives as long as the database: nothing can cut it. */
const connectionsOfTheirOwn =
  testDbKind() === 'postgres' ? false : 'PostgreSQL only: PGlite has no connection to cut'
const sink = await startSmtpSink({ rcptCode: (a) => (a.startsWith('later') ? 451 : undefined) })
const delivered = () => sink.messages.flatMap((m) => m.envelopeTo).sort()

describe('sender: rows of a sender whose lock is gone', async () => {
  // The clock never moves: no lease runs out in this file, so only the locks can free a row.
  const clock = new ManualClock(new Date('2026-12-03T10:00:00Z'))
  const t = await startTestApp({ clock, worker: false, config: { smtpUrl: sink.url, sendThreads: 0 } })
  const paid = await t.createAccount('paid')
  await addDomain(t, paid.id, 'shop.example')
  const sender = startCampaignSender(t.ctx, { loop: false, batchSize: 10 })
  t.ctx.onClose(() => sender.stop())
  const farLease = new Date(clock.now().getTime() + 3 * 86_400_000)

  /** Queues one transactional message to each address. */
  async function queue(emails: string[]) {
    const res = await t.req('POST', '/transactional/send-message', {
      key: paid.key,
      body: { message: baseMessage('orders@shop.example', { to: emails.map((email) => ({ email })) }) },
    })
    assert.equal(res.status, 200, res.text)
  }
  /** Queues one message to each address and claims them as another sender numbered `claimer` would. */
  async function claimedBy(claimer: number, emails: string[]) {
    await queue(emails)
    const rows = await claimQueued(t.ctx.dbHandle, { bodies: true }, 0, 100, farLease, claimer)
    assert.deepEqual(rows.map((r) => r.email).sort(), [...emails].sort())
  }
  const noop = () => undefined
  const quiet = { onError: noop, onPooled: noop, onLost: noop }
  const statusOf = async (email: string) =>
    (
      await queryRows<{ status: number; claimed_by: number | null }>(
        t.ctx.db,
        sql`SELECT status, claimed_by FROM messages WHERE email = ${email}`,
      )
    )[0]

  it('sends at once the rows of a number no session holds, and claims them under its own', async () => {
    sink.messages.length = 0
    await claimedBy(424_242, ['dead1@example.cz', 'dead2@example.cz'])
    await sender.runOnce()
    assert.deepEqual(delivered(), ['dead1@example.cz', 'dead2@example.cz'])
    const row = await statusOf('dead1@example.cz')
    assert.equal(row?.status, 1)
    assert.ok(row?.claimed_by && row.claimed_by !== 424_242, 'taken over under the sender’s own number')
  })

  it('leaves the rows of a living sender to it until its lock is released', async () => {
    sink.messages.length = 0
    const lock = await t.ctx.dbHandle.sessionLock(CLAIMER_LOCK_SPACE, 515_151)
    assert.ok(typeof lock === 'object', `the number is free: ${String(lock)}`)
    await claimedBy(515_151, ['alive@example.cz'])
    for (let i = 0; i < 3; i++) await sender.runOnce()
    assert.deepEqual(delivered(), [], 'a living sender’s row waits')
    assert.deepEqual(await statusOf('alive@example.cz'), { status: 4, claimed_by: 515_151 })
    await lock.release()
    await sender.runOnce()
    assert.deepEqual(delivered(), ['alive@example.cz'])
  })

  it('draws a number it holds until released, and none when turned off (SEND_CLAIM_LOCKS=0)', async () => {
    const off = startClaimer(t.ctx.dbHandle, { ...quiet, enabled: false })
    assert.equal(await off.current(), null)
    const on = startClaimer(t.ctx.dbHandle, { ...quiet, enabled: true })
    const id = await on.current()
    assert.ok(id, 'a number')
    assert.equal(await on.current(), id, 'the same while held')
    assert.equal(await t.ctx.dbHandle.sessionLock(CLAIMER_LOCK_SPACE, id), 'taken')
    await on.release()
    assert.equal(await on.current(), null, 'none once released')
    const freed = await t.ctx.dbHandle.sessionLock(CLAIMER_LOCK_SPACE, id)
    assert.ok(typeof freed === 'object', 'its lock is free again')
    await freed.release()
  })

  it(
    'takes the same number again when its lock’s connection is cut',
    { skip: connectionsOfTheirOwn },
    async () => {
      let lost = 0
      let meanwhile: Promise<number | null> | undefined
      const claimer = startClaimer(t.ctx.dbHandle, {
        ...quiet,
        enabled: true,
        // A claim made the moment the loss is known.
        onLost: () => {
          lost++
          meanwhile = claimer.current()
        },
      })
      try {
        const id = await claimer.current()
        assert.ok(id, 'a number')
        await t.ctx.dbHandle.executeSql(
          `SELECT pg_terminate_backend(pid) FROM pg_locks
         WHERE locktype = 'advisory' AND classid = (${CLAIMER_LOCK_SPACE})::int::oid AND objid = ${id}::int::oid
           AND objsubid = 2 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        )
        for (let i = 0; i < 100 && lost === 0; i++) await new Promise((r) => setTimeout(r, 20))
        assert.equal(lost, 1, 'the loss was told')
        // The claim made meanwhile waited for the number taken again, rather than claiming with none.
        assert.equal(await meanwhile, id, 'the same number')
        assert.equal(await t.ctx.dbHandle.sessionLock(CLAIMER_LOCK_SPACE, id), 'taken', 'held again')
      } finally {
        await claimer.release()
      }
    },
  )

  it('looks for freed rows before queued ones: a dead sender’s row does not wait for the queue', async () => {
    sink.messages.length = 0
    await claimedBy(434_343, ['orphan@example.cz'])
    const queued = Array.from({ length: 15 }, (_, i) => `queued${i}@example.cz`)
    await queue(queued)
    // A new sender: its first claim of a scope looks for freed rows first.
    const fresh = startCampaignSender(t.ctx, { loop: false, batchSize: 10 })
    try {
      await fresh.runOnce()
    } finally {
      await fresh.stop()
    }
    // Its batch of 10: the orphan first, then 9 of the 15 queued before it.
    assert.equal(delivered().length, 10)
    assert.ok(delivered().includes('orphan@example.cz'), 'the orphan, while 6 still wait queued')
    await sender.runOnce()
    await sender.runOnce()
    assert.equal(delivered().length, 16)
  })

  it('claims queued rows under a number it holds while it lives', async () => {
    sink.messages.length = 0
    await queue(['own@example.cz'])
    await sender.runOnce()
    assert.deepEqual(delivered(), ['own@example.cz'])
    const [row] = await queryRows<{ claimed_by: number | null; held: boolean }>(
      t.ctx.db,
      sql`SELECT m.claimed_by, EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory'
            AND l.classid = ${CLAIMER_LOCK_SPACE}::int::oid AND l.objid = m.claimed_by::oid) AS held
          FROM messages m WHERE m.email = 'own@example.cz'`,
    )
    assert.ok(row?.claimed_by, 'claimed under a number')
    assert.equal(row.held, true, 'the number is this sender’s lock')
  })

  it('takes back, once their lease runs out, the rows of its own batch that failed midway', async () => {
    sink.messages.length = 0
    let failures = 1
    const failing = startCampaignSender(t.ctx, {
      loop: false,
      batchSize: 10,
      outcomes: (real) => ({
        ...real,
        // The marking's first step fails once: the batch ends on an error, its mail at the relay but not marked.
        sentWanted: (...args) =>
          failures-- > 0 ? Promise.reject(new Error('database gone')) : real.sentWanted(...args),
      }),
    })
    try {
      await queue(['midway@example.cz'])
      await failing.runOnce()
      assert.equal((await statusOf('midway@example.cz'))?.status, 4, 'claimed still, its marking failed')
      await failing.runOnce()
      assert.equal((await statusOf('midway@example.cz'))?.status, 4, 'its lease holds')
      clock.advance(t.ctx.config.sendLeaseSeconds * 1000 + 1000)
      await failing.runOnce()
    } finally {
      await failing.stop()
    }
    assert.equal(
      (await statusOf('midway@example.cz'))?.status,
      1,
      'sent again and marked, by the same sender',
    )
    assert.deepEqual(delivered(), ['midway@example.cz', 'midway@example.cz'])
  })

  // Last in this file: it leaves a deferred row behind.
  it('keeps a deferred row waiting for its retry time after the sender that deferred it is gone', async () => {
    sink.messages.length = 0
    await queue(['later@example.cz'])
    await sender.runOnce()
    assert.deepEqual(
      await statusOf('later@example.cz'),
      { status: 4, claimed_by: null },
      'deferred, no owner',
    )
    await sender.stop()
    const next = startCampaignSender(t.ctx, { loop: false, batchSize: 10 })
    try {
      for (let i = 0; i < 3; i++) await next.runOnce()
    } finally {
      await next.stop()
    }
    assert.equal((await statusOf('later@example.cz'))?.status, 4, 'still waiting')
    assert.equal(sink.messages.length, 0, 'not tried again before its time')
  })
})
