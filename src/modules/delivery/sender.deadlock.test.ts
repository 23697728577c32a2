import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { needsSecondConnection, withSecondConnection } from '../../../test/helpers/second-connection.js'
import { startCampaignSender } from '../../../test/helpers/sender.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { queryOne } from '../../core/db/sql.js'
import {
  campaignRow,
  createCampaign,
  listWith,
  sendingDomain,
} from '../campaigns/campaign-send.test-helpers.js'

const REFUSED = 'gone@example.cz'
const sink = await startSmtpSink({ rcptCode: (a) => (a === REFUSED ? 550 : undefined) })

/**
 * The sender's writes after the relay answered, when PostgreSQL aborts them to break a deadlock: the other
 * transaction holds what the sender's transaction wants second, the sender waits for it, then the other wants
 * the message row the sender already updated. The sender waited longer, so it is the one aborted. Before these
 * writes were run again, the campaign stopped with an internal error and the message, sent but not marked,
 * was claimed and sent again once its lease ran out.
 */
describe(
  'sender: recording the relay answers after a deadlock',
  { skip: needsSecondConnection },
  async () => {
    const t = await startTestApp({ worker: false, config: { smtpUrl: sink.url, sendThreads: 0 } })
    const paid = await t.createAccount('paid')
    await sendingDomain(t, paid)
    // A webhook to tell: sent messages are marked in a transaction with their outbox events.
    const hook = await t.req('POST', '/account/settings/webhook', {
      key: paid.key,
      body: { url: 'https://hooks.example.com/tidings' },
    })
    assert.equal(hook.status, 200, hook.text)

    /** Sends campaign `id` with one round of a sender of our own while `meanwhile` runs beside it. */
    async function sendBeside(id: number, meanwhile: () => Promise<void>) {
      const sender = startCampaignSender(t.ctx, { loop: false })
      try {
        assert.equal((await t.req('POST', `/campaigns/${id}/send`, { key: paid.key })).status, 200)
        const round = sender.runOnce()
        await meanwhile()
        await round
        // The round after it finishes the campaign (nothing left to claim).
        await sender.runOnce()
      } finally {
        await sender.stop()
      }
    }

    const message = (id: number, email: string) =>
      queryOne<{ id: number; status: number; sends: number; bounces: number; outbox: number }>(
        t.ctx.db,
        sql`SELECT m.id::int, m.status,
                 (SELECT count(*)::int FROM events e WHERE e.message_id = m.id AND e.event = 'send') AS sends,
                 (SELECT count(*)::int FROM events e WHERE e.message_id = m.id AND e.event = 'hard_bounce')
                   AS bounces,
                 (SELECT count(*)::int FROM webhook_outbox o
                   WHERE o.payload->>'message_id' = m.id::text AND o.payload->>'type' = 'delivery') AS outbox
          FROM messages m WHERE m.campaign_id = ${id} AND m.email = ${email}`,
      )

    it('marks an accepted message sent once, with its webhook event, and the campaign ends', async () => {
      const list = await listWith(t, paid, [{ email: 'jana@example.cz' }])
      const id = await createCampaign(t, paid, [list], { from_email: 'news@shop.example' })
      await withSecondConnection(t, async ({ other, untilLockWait }) => {
        // The other transaction holds every counter row of the campaign: the marking updates the message, then waits.
        await other.query('BEGIN')
        await other.query(
          `INSERT INTO stat_counters (campaign_id, shard) SELECT $1, s FROM generate_series(0, 15) s`,
          [id],
        )
        await sendBeside(id, async () => {
          await untilLockWait()
          await other.query('SELECT 1 FROM messages WHERE campaign_id = $1 FOR UPDATE', [id])
          await other.query('COMMIT')
        })
      })
      assert.equal((await campaignRow(t, id))?.status, 3, 'the campaign finished')
      const m = await message(id, 'jana@example.cz')
      assert.deepEqual(
        { status: m?.status, sends: m?.sends, outbox: m?.outbox },
        { status: 1, sends: 1, outbox: 1 },
      )
      assert.equal(sink.messages.filter((s) => s.envelopeTo.includes('jana@example.cz')).length, 1)
    })

    it('records a refused message as a hard bounce once, and the campaign ends', async () => {
      // One accepted beside it: a campaign whose every message was refused stops with that error instead.
      const list = await listWith(t, paid, [{ email: REFUSED }, { email: 'petr@example.cz' }])
      const id = await createCampaign(t, paid, [list], { from_email: 'news@shop.example' })
      await withSecondConnection(t, async ({ other, untilLockWait }) => {
        // The other transaction holds the contact: the refusal marks the message, then waits to suppress the address.
        await other.query('BEGIN')
        await other.query('SELECT 1 FROM contacts WHERE email = $1 FOR UPDATE', [REFUSED])
        await sendBeside(id, async () => {
          await untilLockWait()
          await other.query('SELECT 1 FROM messages WHERE campaign_id = $1 FOR UPDATE', [id])
          await other.query('COMMIT')
        })
      })
      const row = await campaignRow(t, id)
      assert.equal(row?.error, null, 'no internal error')
      assert.equal(row?.status, 3, 'the campaign finished')
      const m = await message(id, REFUSED)
      assert.deepEqual({ status: m?.status, bounces: m?.bounces }, { status: 2, bounces: 1 })
    })
  },
)
