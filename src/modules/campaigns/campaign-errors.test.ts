import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import path from 'node:path'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { outboxMails, toAddresses } from '../../../test/helpers/outbox.js'
import { ManualClock } from '../../core/clock.js'
import { startCampaignSender } from '../../../test/helpers/sender.js'
import { campaignRow, createCampaign, ledger, listWith, shownError } from './campaign-send.test-helpers.js'

/**
 * Contract §4 `error` where the other tests do not reach it (drafts, unexpected failures, old rows), in outbox
 * mode, where the campaigns' unverified domain sends all the same (contract §2).
 */
describe('campaign error field: null unless errored, internal failures, rows from before the codes', async () => {
  const clock = new ManualClock(new Date('2026-11-23T10:00:00Z'))
  // Outbox mode: the campaigns' domain is not verified, and they send all the same.
  const t = await startTestApp({ clock, worker: false, config: { sendThreads: 0 } })
  const list = await listWith(t, t.account, [{ email: 'a@example.cz' }, { email: 'b@example.cz' }])
  const failing = startCampaignSender(t.ctx, {
    loop: false,
    signer: {
      sign: () => Promise.reject(new Error('the template engine fell over')),
      close: async () => undefined,
    },
  })
  // What node-postgres throws when PostgreSQL restarts or fails over under a batch, or under a freeze.
  const shutDown = () =>
    Promise.reject(
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    )
  const cut = startCampaignSender(t.ctx, {
    loop: false,
    signer: { sign: shutDown, close: async () => undefined },
  })
  const cutWhilePreparing = startCampaignSender(t.ctx, {
    loop: false,
    signer: { sign: shutDown, links: shutDown, close: async () => undefined },
  })
  const sender = startCampaignSender(t.ctx, { loop: false })
  t.ctx.onClose(async () => {
    await failing.stop()
    await cut.stop()
    await cutWhilePreparing.stop()
    await sender.stop()
  })

  it('shows error: null on drafts and scheduled campaigns, in the list and the detail', async () => {
    const draft = await createCampaign(t, t.account, [list])
    assert.equal(await shownError(t, t.account, draft), null)
    const scheduled = await createCampaign(t, t.account, [list])
    const res = await t.req('POST', `/campaigns/${scheduled}/schedule`, {
      body: { scheduled_at: '2027-01-01 10:00:00' },
    })
    assert.equal(res.status, 200)
    assert.equal(await shownError(t, t.account, scheduled), null)
    const page = await t.req('GET', '/campaigns')
    assert.ok(page.body.length >= 2)
    for (const item of page.body) assert.equal(item.error, null, JSON.stringify(item))
    const openapi = await t.req('GET', '/openapi.json', { key: null })
    const item =
      openapi.body.paths['/campaigns'].get.responses['200'].content['application/json'].schema.items
    assert.ok(item.properties.error, 'the OpenAPI list item names the error field')
  })

  it('errors a campaign as internal on an unexpected failure; resumed, it sends the claimed rows', async () => {
    const id = await createCampaign(t, t.account, [list])
    assert.equal((await t.req('POST', `/campaigns/${id}/send`)).status, 200)
    await failing.runOnce()
    assert.equal((await campaignRow(t, id))?.status, 4)
    assert.deepEqual(await shownError(t, t.account, id), {
      code: 'internal',
      message:
        'Sending stopped on an unexpected error: the server log has the details; resume the campaign once it is fixed.',
    })
    assert.deepEqual(
      (await ledger(t, id)).map((r) => r.status),
      [4, 4],
      'still claimed',
    )
    assert.deepEqual((await t.req('POST', `/campaigns/${id}/resume`)).body, { id, status: 2, paused: false })
    assert.equal(await shownError(t, t.account, id), null)
    clock.advance(t.ctx.config.sendLeaseSeconds * 1000 + 1000)
    for (let i = 0; i < 3 && (await campaignRow(t, id))?.status !== 3; i++) await sender.runOnce()
    assert.equal((await campaignRow(t, id))?.status, 3)
    const mails = await outboxMails(path.join(t.dataDir, 'outbox'))
    assert.deepEqual(mails.flatMap((m) => toAddresses(m.parsed.to)).sort(), ['a@example.cz', 'b@example.cz'])
  })

  it('keeps a campaign sending when the database was unavailable under its freeze or a batch: it goes on', async () => {
    const id = await createCampaign(t, t.account, [list])
    assert.equal((await t.req('POST', `/campaigns/${id}/send`)).status, 200)
    await cutWhilePreparing.runOnce()
    assert.equal(await shownError(t, t.account, id), null)
    assert.deepEqual(await ledger(t, id), [], 'not frozen yet')
    await cut.runOnce()
    assert.equal((await campaignRow(t, id))?.status, 2)
    assert.equal(await shownError(t, t.account, id), null)
    clock.advance(t.ctx.config.sendLeaseSeconds * 1000 + 1000)
    for (let i = 0; i < 3 && (await campaignRow(t, id))?.status !== 3; i++) await sender.runOnce()
    assert.equal((await campaignRow(t, id))?.status, 3)
    assert.deepEqual(
      (await ledger(t, id)).map((r) => r.status),
      [1, 1],
    )
  })

  it('shows a row errored before codes were stored as internal, with its old reason', async () => {
    const id = await createCampaign(t, t.account, [list])
    await t.ctx.db.execute(
      sql`UPDATE campaigns SET status = 4, error = 'the relay exploded', error_code = NULL WHERE id = ${id}`,
    )
    assert.deepEqual(await shownError(t, t.account, id), { code: 'internal', message: 'the relay exploded' })
  })

  it('sends test copies from a domain that is not verified (outbox mode), unsigned', async () => {
    const id = await createCampaign(t, t.account, [list], { subject: 'Copy for *|email|*' })
    const res = await t.req('POST', `/campaigns/${id}/test`, { body: { emails: ['qa@example.cz'] } })
    assert.deepEqual(res.body, { success: true, sent: 1 })
    // The copy is a ledger row: the one sender sends it.
    await sender.runOnce()
    const copy = (await outboxMails(path.join(t.dataDir, 'outbox'))).find((m) =>
      toAddresses(m.parsed.to).includes('qa@example.cz'),
    )
    assert.equal(copy?.parsed.subject, 'Copy for qa@example.cz')
    assert.equal(copy?.parsed.from?.value[0]?.address, 'news@shop.example')
    assert.doesNotMatch(copy?.raw ?? 'DKIM-Signature:', /^DKIM-Signature:/im)
  })

  it("shows another account's campaign to nobody else", async () => {
    const other = await t.createAccount()
    const id = await createCampaign(t, t.account, [list])
    assert.equal((await t.req('GET', `/campaigns/${id}`, { key: other.key })).status, 404)
    assert.deepEqual((await t.req('GET', '/campaigns', { key: other.key })).body, [])
  })
})
