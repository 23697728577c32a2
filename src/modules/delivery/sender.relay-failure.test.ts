import assert from 'node:assert/strict'
import net from 'node:net'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { startCampaignSender } from '../../../test/helpers/sender.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { ManualClock } from '../../core/clock.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import {
  campaignRow,
  createCampaign,
  ledger,
  listWith,
  sendingDomain,
  shownError,
} from '../campaigns/campaign-send.test-helpers.js'
import { RELAY_RETRY_MS } from './sender.js'
import { sendOrderMail } from '../../../test/helpers/transactional.js'

/**
 * A relay that fails itself (unreachable, our login refused) says nothing of the recipients: nobody bounces, the
 * rows wait, and once the relay takes mail again they go. Read as bounces, a wrong SMTP password suppressed every
 * recipient tried, and an outage past the retry soft-bounced the rest of a campaign, which then read "sent".
 */
const people = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => ({ email: `${prefix}${i}@x.cz` }))

async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

async function bounces(t: Awaited<ReturnType<typeof startTestApp>>) {
  const row = await queryOne<{ suppressed: number; bounced: number }>(
    t.ctx.db,
    sql`SELECT (SELECT count(*)::int FROM contacts WHERE suppressed IS NOT NULL) AS suppressed,
               (SELECT count(*)::int FROM events WHERE event IN ('hard_bounce', 'soft_bounce')) AS bounced`,
  )
  return row
}

/** An app relaying to `smtpUrl`, and a campaign to `to` sent and given one round of its sender. */
async function campaignSentTo(smtpUrl: string, to: { email: string }[], clock?: ManualClock) {
  const t = await startTestApp({
    ...(clock ? { clock } : {}),
    worker: false,
    config: { smtpUrl, sendThreads: 0 },
  })
  await sendingDomain(t, t.account)
  const sender = startCampaignSender(t.ctx, { loop: false, batchSize: 10 })
  t.ctx.onClose(() => sender.stop())
  const id = await createCampaign(t, t.account, [await listWith(t, t.account, to)])
  await t.req('POST', `/campaigns/${id}/send`)
  await sender.runOnce()
  return { t, sender, id }
}

describe('a relay that fails itself bounces nobody', () => {
  it('unreachable: the campaign stops, its rows wait; resumed once the relay is back, everyone gets it', async () => {
    const port = await freePort()
    const clock = new ManualClock(new Date('2026-11-22T10:00:00Z'))
    const { t, sender, id } = await campaignSentTo(`smtp://127.0.0.1:${port}`, people(4, 'down'), clock)
    assert.equal((await campaignRow(t, id))?.status, 4)
    assert.equal((await shownError(t, t.account, id))?.code, 'relay_refused_all')
    // A second failure past the 5-minute deferral would have made soft bounces.
    clock.advance(RELAY_RETRY_MS + 5 * 60_000)
    await t.req('POST', `/campaigns/${id}/resume`)
    await sender.runOnce()
    assert.deepEqual(await bounces(t), { suppressed: 0, bounced: 0 })
    assert.deepEqual(
      (await ledger(t, id)).map((r) => r.status),
      [4, 4, 4, 4],
    )

    const sink = await startSmtpSink({ port })
    clock.advance(RELAY_RETRY_MS + 1000)
    await t.req('POST', `/campaigns/${id}/resume`)
    for (let i = 0; i < 5 && (await campaignRow(t, id))?.status !== 3; i++) await sender.runOnce()
    assert.equal((await campaignRow(t, id))?.status, 3)
    assert.deepEqual(
      sink.messages.flatMap((m) => m.envelopeTo).sort(),
      people(4, 'down').map((p) => p.email),
    )
    assert.deepEqual(await bounces(t), { suppressed: 0, bounced: 0 })
  })

  it('refusing our login (535): the campaign stops, nobody is suppressed, no message is refused', async () => {
    const sink = await startSmtpSink({ login: (user, pass) => user === 'shop' && pass === 'right' })
    const { t, id } = await campaignSentTo(`smtp://shop:wrong@127.0.0.1:${sink.port}`, people(3, 'auth'))
    assert.equal((await campaignRow(t, id))?.status, 4)
    const error = await shownError(t, t.account, id)
    assert.equal(error?.code, 'relay_refused_all')
    assert.match(error?.message ?? '', /535/)
    assert.deepEqual(await bounces(t), { suppressed: 0, bounced: 0 })
    assert.deepEqual(
      (await ledger(t, id)).map((r) => r.status),
      [4, 4, 4],
    )
    assert.equal(sink.messages.length, 0)
  })
})

describe('mail with a body row is given up after RELAY_GIVE_UP_HOURS of a failing relay', () => {
  it('tried every minute until then; past it, the next failure refuses it without a bounce', async () => {
    const port = await freePort()
    const clock = new ManualClock(new Date('2026-11-22T10:00:00Z'))
    const t = await startTestApp({
      clock,
      worker: false,
      config: { smtpUrl: `smtp://127.0.0.1:${port}`, sendThreads: 0, relayGiveUpHours: 120 },
    })
    const paid = await t.createAccount('paid')
    await sendingDomain(t, paid)
    const sender = startCampaignSender(t.ctx, { loop: false, batchSize: 10 })
    t.ctx.onClose(() => sender.stop())
    const send = (email: string) => sendOrderMail(t, paid.key, [email])
    const state = (error: string | null) =>
      error?.startsWith('relay failed: ')
        ? 'waits'
        : error?.startsWith('not sent: relay failed: ')
          ? 'given up'
          : error
    const rows = async () =>
      (
        await queryRows<{ email: string; status: number; error: string | null }>(
          t.ctx.db,
          sql`SELECT email, status, error FROM messages ORDER BY id`,
        )
      ).map((m) => `${m.email} ${m.status} ${state(m.error)}`)

    await send('old@x.cz')
    await sender.runOnce()
    assert.deepEqual(await rows(), ['old@x.cz 4 waits'])
    clock.advance(119 * 3_600_000)
    await send('new@x.cz')
    await sender.runOnce()
    assert.deepEqual(await rows(), ['old@x.cz 4 waits', 'new@x.cz 4 waits'])

    clock.advance(2 * 3_600_000)
    await sender.runOnce()
    assert.deepEqual(await rows(), ['old@x.cz 2 given up', 'new@x.cz 4 waits'])
    assert.deepEqual(await bounces(t), { suppressed: 0, bounced: 0 })
  })
})
