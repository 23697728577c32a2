/** `*|COUPON:<folder>|*` in transactional mail: one code per recipient, kept when the job runs again. */
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { queryRows } from '../../core/db/sql.js'
import { startCampaignSender as startSender } from '../../../test/helpers/sender.js'
import { addDomain, batchState, messagesOfBatch } from './transactional.test-helpers.js'

const sink = await startSmtpSink()

describe('coupon codes in transactional mail', async () => {
  const t = await startTestApp({ config: { smtpUrl: sink.url } })
  const paid = await t.createAccount('paid')
  await addDomain(t, paid.id, 'shop.example')
  const folder = (await t.req('POST', '/coupons/folders', { key: paid.key, body: { name: 'Orders' } })).body
    .id as number
  await t.req('POST', '/coupons/import', {
    key: paid.key,
    body: { folderId: folder, codes: ['TX1', 'TX2', 'TX3'] },
  })
  const codes = () =>
    queryRows<{ code: string; email: string | null }>(
      t.ctx.db,
      sql`SELECT c.code, m.email FROM coupons c LEFT JOIN messages m ON m.id = c.message_id
          WHERE c.folder_id = ${folder} ORDER BY c.id`,
    )

  it('send-message and send-template give each recipient its own code, which merge_vars cannot replace', async () => {
    const res = await t.req('POST', '/transactional/send-message', {
      key: paid.key,
      body: {
        message: {
          subject: 'Your code *|COUPON:' + folder + '|*',
          from_name: 'Shop',
          from_email: 'orders@shop.example',
          html: `<p>Code {*|coupon:${folder}|*}</p>`,
          text: `Code *|COUPON:${folder}|*`,
          to: [{ email: 'a@example.cz' }, { email: 'b@example.cz' }],
          global_merge_vars: [{ name: `coupon:${folder}`, content: 'FORGED' }],
        },
      },
    })
    assert.equal(res.status, 200, res.text)
    assert.equal(await batchState(t, res.body.results.id, ['completed']), 'completed')
    const mails = await sink.waitFor(2)
    const byTo = new Map(mails.map((m) => [m.envelopeTo[0], m.parsed]))
    // Which recipient draws which code depends on which of the sender's lanes claims it first: each gets one of
    // the first two, its own, in subject, HTML and text alike, and FORGED nowhere.
    const codeOf = (to: string) => /^Your code (TX[12])$/.exec(byTo.get(to)?.subject ?? '')?.[1]
    const [codeA, codeB] = [codeOf('a@example.cz'), codeOf('b@example.cz')]
    assert.deepEqual([codeA, codeB].sort(), ['TX1', 'TX2'])
    assert.ok(String(byTo.get('a@example.cz')?.html).includes(`Code ${codeA}`))
    assert.equal(byTo.get('b@example.cz')?.text?.trim(), `Code ${codeB}`)
    const tpl = await t.req('POST', '/templates', {
      key: paid.key,
      body: { name: 'T', subject: 'T *|COUPON:' + folder + '|*', html: 'x' },
    })
    const viaTemplate = await t.req('POST', '/transactional/send-template', {
      key: paid.key,
      body: {
        message: {
          template_id: tpl.body.id,
          from_name: 'Shop',
          from_email: 'orders@shop.example',
          to: [{ email: 'c@example.cz' }, { email: 'd@example.cz' }],
        },
      },
    })
    assert.equal(await batchState(t, viaTemplate.body.results.id, ['completed']), 'completed')
    await sink.waitFor(4)
    const subjects = sink.messages
      .slice(2)
      .map((m) => [m.envelopeTo[0], m.parsed.subject])
      .sort()
    // The folder held three codes: one of the two recipients gets the last, the other none, and its miss is kept.
    const withCode = subjects.find(([, subject]) => subject === 'T TX3')?.[0]
    const without = subjects.find(([, subject]) => subject === 'T')?.[0]
    assert.deepEqual([withCode, without].sort(), ['c@example.cz', 'd@example.cz'])
    // The folder shows each code handed to the recipient whose mail carried it.
    const holderOf = (code: string) => (codeA === code ? 'a@example.cz' : 'b@example.cz')
    assert.deepEqual(
      (await codes()).map((c) => [c.code, c.email]),
      [
        ['TX1', holderOf('TX1')],
        ['TX2', holderOf('TX2')],
        ['TX3', withCode],
      ],
    )
    const misses = await queryRows<{ email: string; campaign_id: number }>(
      t.ctx.db,
      sql`SELECT m.email, cm.campaign_id FROM coupon_misses cm JOIN messages m ON m.id = cm.message_id
          WHERE cm.folder_id = ${folder}`,
    )
    assert.deepEqual(misses, [{ email: without, campaign_id: 0 }])
  })

  it('a send job run again for a message still queued gives it the code it was given', async () => {
    await t.req('POST', '/coupons/import', {
      key: paid.key,
      body: { folderId: folder, codes: ['TX4', 'TX5'] },
    })
    const res = await t.req('POST', '/transactional/send-message', {
      key: paid.key,
      body: {
        message: {
          subject: 'Again *|COUPON:' + folder + '|*',
          from_name: 'Shop',
          from_email: 'orders@shop.example',
          text: 'x',
          to: [{ email: 'again@example.cz' }],
        },
      },
    })
    const id = res.body.results.id as number
    assert.equal(await batchState(t, id, ['completed']), 'completed')
    const [row] = await messagesOfBatch(t, id)
    // As a sender that died after the relay took the message and before it was marked: queued again.
    sink.messages.length = 0
    await t.ctx.db.execute(sql`UPDATE messages SET status = 0 WHERE id = ${row!.id}`)
    const sender = startSender(t.ctx, { loop: false })
    await sender.runOnce()
    await sender.stop()
    assert.equal(await batchState(t, id, ['completed']), 'completed')
    assert.equal(sink.messages.length, 1)
    assert.equal(sink.messages[0]?.parsed.subject, 'Again TX4')
    assert.equal((await codes()).filter((c) => c.email === 'again@example.cz').length, 1)
  })
})
