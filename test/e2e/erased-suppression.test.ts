import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { queryRows } from '../../src/core/db/sql.js'
import {
  createCampaign,
  ledger,
  sendingDomain,
  waitForStatus,
} from '../../src/modules/campaigns/campaign-send.test-helpers.js'
import { applyComplaint } from '../../src/modules/subscribers/index.js'
import { contactOf, memberOf } from '../../src/modules/subscribers/subscribers.write.test-helpers.js'
import { addDomain, baseMessage } from '../../src/modules/transactional/transactional.test-helpers.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js'

/**
 * Issue 10 item 3: a GDPR erasure (contract §3) must not let a hard-bounced or complained address be mailed
 * again. Suppressions come from the real paths (bulk update status 4, the complaint handler), erasure and
 * re-import go through the API, and what is mailed is read at the SMTP sink and in the send ledger.
 */

// At file level, so it closes after the app (the app's pooled connections would hold it open otherwise).
const sink: SmtpSink = await startSmtpSink()

describe('erasing a suppressed address keeps it suppressed', async () => {
  const t: TestApp = await startTestApp({ config: { smtpUrl: sink.url, sendThreads: 1 } })
  await sendingDomain(t, t.account)
  await addDomain(t, t.account.id, 'shop.example', { type: 'transactional' })
  const other = await t.createAccount()

  const list = async () => {
    const res = await t.req('POST', '/lists', { body: { name: 'List' } })
    assert.equal(res.status, 200, res.text)
    return res.body.id as number
  }
  const ok = <T extends { status: number; text: string }>(res: T) => {
    assert.equal(res.status, 200, res.text)
    return res
  }
  const subscribe = (listId: number, subscriber_data: Record<string, unknown>, extra = {}) =>
    t.req('POST', `/lists/${listId}/subscribe`, { body: { subscriber_data, ...extra } })
  const bulk = (listId: number, emails: string[], extra = {}) =>
    t.req('POST', `/lists/${listId}/subscribe-bulk`, {
      body: { subscriber_data: emails.map((email) => ({ email })), ...extra },
    })
  const erase = (email: string) => t.req('DELETE', `/subscribers/${email}/delete`)
  /** A transactional send; once the worker has sent it, the addresses that got it at the sink. */
  const transactional = async (emails: string[], accepted: number) => {
    const before = sink.messages.length
    const res = await t.req('POST', '/transactional/send-message', {
      body: { message: baseMessage('info@shop.example', { to: emails.map((email) => ({ email })) }) },
    })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.results.total_accepted_recipients, accepted)
    assert.equal(res.body.results.total_rejected_recipients, emails.length - accepted)
    const got = (await sink.waitFor(before + accepted)).slice(before).flatMap((m) => m.envelopeTo)
    return got.sort()
  }
  const rememberedRows = () =>
    queryRows<Record<string, unknown>>(t.ctx.db, sql`SELECT * FROM erased_suppressions ORDER BY reason`)
  /** Sends a campaign to the list and returns the addresses it went to, at the sink and in the ledger. */
  const campaignTo = async (listId: number) => {
    const before = sink.messages.length
    const id = await createCampaign(t, t.account, [listId])
    ok(await t.req('POST', `/campaigns/${id}/send`))
    const done = await waitForStatus(t, id, [3, 4])
    assert.equal(done.status, 3, JSON.stringify(done))
    const ledgerTo = (await ledger(t, id)).map((r) => r.email).sort()
    const sinkTo = sink.messages
      .slice(before)
      .flatMap((m) => m.envelopeTo)
      .sort()
    assert.deepEqual(sinkTo, ledgerTo, 'every ledger row reached the sink, nothing else did')
    return ledgerTo
  }

  const first = await list()
  ok(await bulk(first, ['hb1@example.cz', 'hb2@example.cz', 'spam@example.cz', 'clean@example.cz']))
  // The ways an address gets suppressed: a bulk update to status 4 (hard bounce), the complaint handler.
  ok(
    await t.req('PUT', `/lists/${first}/update-subscribers-bulk`, {
      body: {
        subscriber_data: [
          { email: 'hb1@example.cz', status: 4 },
          { email: 'hb2@example.cz', status: 4 },
        ],
      },
    }),
  )
  await applyComplaint(t.ctx.db, t.account.id, 'spam@example.cz', new Date())
  assert.equal((await contactOf(t, 'hb1@example.cz'))?.suppressed, 'hard_bounce')
  assert.equal((await contactOf(t, 'spam@example.cz'))?.suppressed, 'complaint')
  for (const email of ['hb1@example.cz', 'hb2@example.cz', 'spam@example.cz', 'clean@example.cz'])
    assert.deepEqual(ok(await erase(email)).body, { deleted: true })

  it('remembers only the suppressed ones, by keyed hash, with no plain address', async () => {
    const rows = await rememberedRows()
    const hash = (email: string) =>
      createHmac('sha256', t.ctx.erasureSecret).update(`${t.account.id}:${email}`).digest('hex')
    const seen = rows.map((r) => JSON.stringify([r.account_id, r.reason, r.address_hash])).sort()
    const expected = [
      [t.account.id, 'complaint', hash('spam@example.cz')],
      [t.account.id, 'hard_bounce', hash('hb1@example.cz')],
      [t.account.id, 'hard_bounce', hash('hb2@example.cz')],
    ]
    assert.deepEqual(seen, expected.map((r) => JSON.stringify(r)).sort())
    const stored = JSON.stringify(rows)
    for (const part of ['@', 'hb1', 'hb2', 'spam', 'example'])
      assert.ok(!stored.includes(part), `no trace of "${part}" in ${stored}`)
    // The key is the installation's erasure secret, not the link-signing one.
    assert.notEqual(t.ctx.erasureSecret, t.ctx.linkSecret)
    assert.equal(await contactOf(t, 'hb1@example.cz'), undefined, 'the contact itself is gone')
  })

  it('rejects the erased suppressed addresses at transactional send, not the erased clean one', async () => {
    assert.deepEqual(await transactional(['hb1@example.cz', 'SPAM@example.cz', 'clean@example.cz'], 1), [
      'clean@example.cz',
    ])
  })

  const second = await list()

  it('brings them back suppressed through subscribe and subscribe-bulk; the clean one subscribes', async () => {
    ok(await subscribe(second, { email: 'HB1@example.cz', name: 'Back' }))
    ok(await bulk(second, ['hb2@example.cz', 'spam@example.cz', 'clean@example.cz', 'new@example.cz']))
    assert.equal((await memberOf(t, second, 'hb1@example.cz'))?.status, 4)
    assert.equal((await memberOf(t, second, 'hb2@example.cz'))?.status, 4)
    assert.equal((await memberOf(t, second, 'spam@example.cz'))?.status, 5)
    assert.equal((await memberOf(t, second, 'clean@example.cz'))?.status, 1)
    assert.equal((await memberOf(t, second, 'new@example.cz'))?.status, 1)
    assert.equal((await contactOf(t, 'hb1@example.cz'))?.suppressed, 'hard_bounce')
    assert.equal((await contactOf(t, 'spam@example.cz'))?.suppressed, 'complaint')
    // The suppression lives on the contacts again, so the remembered rows are gone.
    assert.deepEqual(await rememberedRows(), [])
  })

  it('leaves them out of a campaign to the list', async () => {
    assert.deepEqual(await campaignTo(second), ['clean@example.cz', 'new@example.cz'])
  })

  it('lets the person back through resubscribe and allow_resubscribe, and mails them again', async () => {
    const back = ok(await subscribe(second, { email: 'hb1@example.cz' }, { resubscribe: true }))
    assert.equal(back.body.email, 'hb1@example.cz')
    assert.equal((await memberOf(t, second, 'hb1@example.cz'))?.status, 1)
    const res = ok(
      await t.req('PUT', `/lists/${second}/update-subscribers-bulk`, {
        body: { subscriber_data: [{ email: 'hb2@example.cz', status: 1 }], allow_resubscribe: true },
      }),
    )
    assert.deepEqual(res.body, { updates: 1 })
    assert.equal((await memberOf(t, second, 'hb2@example.cz'))?.status, 1)
    assert.equal((await contactOf(t, 'hb1@example.cz'))?.suppressed, null)
    assert.equal((await contactOf(t, 'hb2@example.cz'))?.suppressed, null)
    assert.deepEqual(await campaignTo(second), [
      'clean@example.cz',
      'hb1@example.cz',
      'hb2@example.cz',
      'new@example.cz',
    ])
    // hb1 is accepted again; spam@, still suppressed, is rejected.
    assert.deepEqual(await transactional(['hb1@example.cz', 'spam@example.cz'], 1), ['hb1@example.cz'])
  })

  it('lifts it at once when the re-import itself resubscribes, and forgets it in the table', async () => {
    ok(await bulk(second, ['gone@example.cz']))
    await applyComplaint(t.ctx.db, t.account.id, 'gone@example.cz', new Date())
    ok(await erase('gone@example.cz'))
    assert.equal((await rememberedRows()).length, 1)
    ok(await bulk(second, ['gone@example.cz'], { resubscribe: true }))
    assert.equal((await memberOf(t, second, 'gone@example.cz'))?.status, 1)
    assert.equal((await contactOf(t, 'gone@example.cz'))?.suppressed, null)
    assert.deepEqual(await rememberedRows(), [])
  })

  it('applies to a member who moves onto an erased suppressed address (update-subscriber)', async () => {
    ok(await bulk(second, ['old@example.cz']))
    ok(await bulk(second, ['moved@example.cz']))
    await t.req('PUT', `/lists/${second}/update-subscribers-bulk`, {
      body: { subscriber_data: [{ email: 'moved@example.cz', status: 4 }] },
    })
    ok(await erase('moved@example.cz'))
    const res = ok(
      await t.req('PUT', `/lists/${second}/update-subscriber`, {
        body: { email: 'old@example.cz', subscriber_data: { email: 'moved@example.cz' } },
      }),
    )
    assert.equal(res.body.status, 4)
    assert.equal((await contactOf(t, 'moved@example.cz'))?.suppressed, 'hard_bounce')
    assert.deepEqual(await rememberedRows(), [])
  })

  it('is per account: another account imports the same address normally', async () => {
    ok(await bulk(second, ['shared@example.cz']))
    await applyComplaint(t.ctx.db, t.account.id, 'shared@example.cz', new Date())
    ok(await erase('shared@example.cz'))
    const theirs = ok(await t.req('POST', '/lists', { key: other.key, body: { name: 'Theirs' } })).body
      .id as number
    ok(
      await t.req('POST', `/lists/${theirs}/subscribe`, {
        key: other.key,
        body: { subscriber_data: { email: 'shared@example.cz' } },
      }),
    )
    assert.equal((await memberOf(t, theirs, 'shared@example.cz'))?.status, 1)
    assert.equal((await rememberedRows()).length, 1, "the first account's row stays")
  })
})
