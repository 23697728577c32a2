/**
 * `*|COUPON:<folder>|*` in campaign mail: one distinct code per recipient in import order, never an expired
 * one, the same code again when a mail is sent again, nothing drawn twice by two senders, an empty tag (with
 * a warning and a coupon_misses row) when the folder runs out, and sample codes in test copies.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { startSmtpSink, type SinkMessage } from '../../../test/helpers/smtp-sink.js'
import { ManualClock } from '../../core/clock.js'
import { queryRows } from '../../core/db/sql.js'
import { startCampaignSender } from '../../../test/helpers/sender.js'
import {
  campaignRow,
  createCampaign,
  ledger,
  listWith,
  sendingDomain,
  sendWithTwoSenders,
} from './campaign-send.test-helpers.js'

const people = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => ({ email: `${prefix}${i}@example.cz`, name: `N${i}` }))

const sink = await startSmtpSink()
/** The code a mail carries: in its subject, and twice in its HTML (as text and in a link). */
const codeOf = (m: SinkMessage) => /\[(.*)\]$/.exec(m.parsed.subject ?? '')![1]!

describe('coupon codes in campaign mail', async () => {
  const clock = new ManualClock(new Date('2026-11-22T10:00:00Z'))
  const t = await startTestApp({ clock, worker: false, config: { smtpUrl: sink.url, sendThreads: 0 } })
  await sendingDomain(t, t.account)
  const sender = startCampaignSender(t.ctx, { loop: false, batchSize: 10 })
  t.ctx.onClose(() => sender.stop())
  const warnings: unknown[] = []
  const warn = t.ctx.log.warn.bind(t.ctx.log)
  t.ctx.log.warn = ((obj: unknown, ...rest: unknown[]) => {
    warnings.push(obj)
    return (warn as (...a: unknown[]) => void)(obj, ...rest)
  }) as typeof t.ctx.log.warn

  async function folderWith(codes: string[], validUntil?: string): Promise<number> {
    const id = (await t.req('POST', '/coupons/folders', { body: { name: 'F' } })).body.id as number
    if (codes.length) {
      const res = await t.req('POST', '/coupons/import', {
        body: { folderId: id, codes, ...(validUntil ? { valid_until: validUntil } : {}) },
      })
      assert.equal(res.status, 200, res.text)
    }
    return id
  }
  const couponCampaign = (list: number, folder: number, extra: Record<string, unknown> = {}) =>
    createCampaign(t, t.account, [list], {
      subject: 'Code for *|name|* [*|COUPON:' + folder + '|*]',
      html_text:
        `<p>Your code: *|coupon:${folder}|*</p>` +
        `<p><a href="https://shop.example/cart?coupon=*|COUPON:${folder}|*">Use it</a></p>` +
        '<p><a href="*|WEBVERSION|*">Web</a></p>',
      ...extra,
    })
  async function sendAll(id: number, rounds = 20) {
    await t.req('POST', `/campaigns/${id}/send`)
    for (let i = 0; i < rounds && (await campaignRow(t, id))?.status !== 3; i++) await sender.runOnce()
    assert.equal((await campaignRow(t, id))?.status, 3)
  }
  const assignedOf = (folder: number) =>
    queryRows<{ code: string; message_id: number | null }>(
      t.ctx.db,
      sql`SELECT code, message_id::int AS message_id FROM coupons WHERE folder_id = ${folder} ORDER BY id`,
    )

  it('gives every recipient its own code, oldest first, never an expired one', async () => {
    sink.messages.length = 0
    const folder = await folderWith(['OLD1', 'OLD2'], '2026-11-21')
    await t.req('POST', '/coupons/import', {
      body: { folderId: folder, codes: ['TODAY1'], valid_until: '2026-11-22' },
    })
    const fresh = Array.from({ length: 30 }, (_, i) => `C${String(i).padStart(3, '0')}`)
    await t.req('POST', '/coupons/import', { body: { folderId: folder, codes: fresh } })
    const list = await listWith(t, t.account, people(25, 'cp'))
    const id = await couponCampaign(list, folder)
    await sendAll(id)
    assert.equal(sink.messages.length, 25)
    const rows = await ledger(t, id)
    const codeByEmail = new Map(sink.messages.map((m) => [m.envelopeTo[0]!, codeOf(m)]))
    // In ledger order: the code valid through today first, then the fresh ones in import order.
    assert.deepEqual(
      rows.map((r) => codeByEmail.get(r.email)),
      ['TODAY1', ...fresh.slice(0, 24)],
    )
    for (const m of sink.messages) {
      const code = codeOf(m)
      assert.ok(String(m.parsed.html).includes(`Your code: ${code}`))
      assert.ok(m.parsed.text?.includes(`Your code: ${code}`))
    }
    const assigned = await assignedOf(folder)
    assert.deepEqual(
      assigned.filter((c) => c.code.startsWith('OLD')).map((c) => c.message_id),
      [null, null],
      'expired codes are never handed out',
    )
    const folders = (await t.req('GET', '/coupons/folders')).body as { id: number; available: number }[]
    assert.equal(folders.find((f) => f.id === folder)?.available, 6)
    // The link with the code and the web version show the code this mail carries.
    const first = sink.messages.find((m) => m.envelopeTo[0] === rows[0]!.email)!
    const html = String(first.parsed.html)
    const click = /href="http:\/\/127\.0\.0\.1:3000(\/t\/c\/[^"]+)"/.exec(html)![1]!
    const redirect = await t.app.inject({ method: 'GET', url: click })
    assert.equal(redirect.headers.location, 'https://shop.example/cart?coupon=TODAY1')
    const web = /href="http:\/\/127\.0\.0\.1:3000(\/w\/[^"]+)"/.exec(html)![1]!
    const page = await t.app.inject({ method: 'GET', url: web })
    assert.ok(page.body.includes('Your code: TODAY1'), page.body)
    assert.equal((await assignedOf(folder)).filter((c) => c.message_id !== null).length, 25)
  })

  it('renders the tag empty when the folder runs out, with a warning and a queryable miss', async () => {
    sink.messages.length = 0
    warnings.length = 0
    const folder = await folderWith(['ONLY1', 'ONLY2'])
    const list = await listWith(t, t.account, people(5, 'short'))
    const id = await couponCampaign(list, folder)
    await sendAll(id)
    const codes = sink.messages.map(codeOf).sort()
    assert.deepEqual(codes, ['', '', '', 'ONLY1', 'ONLY2'])
    const empty = sink.messages.filter((m) => codeOf(m) === '')
    for (const m of empty) assert.ok(String(m.parsed.html).includes('Your code: </p>'))
    const misses = await queryRows<{ campaign_id: number; email: string }>(
      t.ctx.db,
      sql`SELECT cm.campaign_id, m.email FROM coupon_misses cm JOIN messages m ON m.id = cm.message_id
          WHERE cm.folder_id = ${folder} ORDER BY m.email`,
    )
    assert.deepEqual(
      misses.map((m) => [m.campaign_id, m.email]),
      empty.map((m) => [id, m.envelopeTo[0]]).sort(),
    )
    assert.ok(
      warnings.some(
        (w) =>
          (w as { folderId?: number; campaignId?: number; missed?: number }).folderId === folder &&
          (w as { campaignId?: number }).campaignId === id &&
          (w as { missed?: number }).missed === 3,
      ),
      JSON.stringify(warnings),
    )
    const shown = (await t.req('GET', '/coupons/folders')).body.find((f: { id: number }) => f.id === folder)
    assert.deepEqual([shown.available, shown.assigned, shown.missed], [0, 2, 3])
    // Each mail's own log says why it had no code: the campaign log and the person's email log.
    const log = await t.req('GET', `/campaigns/${id}/log`)
    assert.equal(log.status, 200, log.text)
    const note = `No coupon code was left in folder ${folder}: the coupon tag rendered empty.`
    const sends = (log.body.campaign_log as { event: string; email: string; msg: string | null }[]).filter(
      (e) => e.event === 'send',
    )
    assert.equal(sends.length, 5)
    assert.deepEqual(
      sends
        .filter((e) => e.msg === note)
        .map((e) => e.email)
        .sort(),
      empty.map((m) => m.envelopeTo[0]).sort(),
    )
    assert.equal(sends.filter((e) => e.msg === null).length, 2)
    const personal = await t.req('GET', `/subscribers/${empty[0]!.envelopeTo[0]}/email-log`)
    assert.equal(personal.status, 200, personal.text)
    assert.deepEqual(
      (personal.body.data as { event: string; msg: string | null }[])
        .filter((e) => e.event === 'send')
        .map((e) => e.msg),
      [note],
    )
  })

  it('sends a mail again (a crash after sending, before marking) with the code it had', async () => {
    sink.messages.length = 0
    const folder = await folderWith(Array.from({ length: 20 }, (_, i) => `R${i}`))
    const list = await listWith(t, t.account, people(8, 'again'))
    const id = await couponCampaign(list, folder)
    await sendAll(id)
    const before = new Map(sink.messages.map((m) => [m.envelopeTo[0]!, codeOf(m)]))
    assert.equal(new Set(before.values()).size, 8)
    // As a sender that died after the relay took its batch and before it marked it: claimed, lease run out.
    await t.ctx.db.execute(
      sql`UPDATE messages SET status = 4, claimed_until = ${new Date(clock.now().getTime() - 1000).toISOString()}::timestamptz
          WHERE campaign_id = ${id}`,
    )
    await t.ctx.db.execute(sql`UPDATE campaigns SET status = 2 WHERE id = ${id}`)
    sink.messages.length = 0
    for (let i = 0; i < 5 && (await campaignRow(t, id))?.status !== 3; i++) await sender.runOnce()
    assert.equal(sink.messages.length, 8)
    for (const m of sink.messages) assert.equal(codeOf(m), before.get(m.envelopeTo[0]!))
    assert.equal((await assignedOf(folder)).filter((c) => c.message_id !== null).length, 8)
  })

  it('two senders drawing from one folder never give one code to two people', async () => {
    sink.messages.length = 0
    const folder = await folderWith(Array.from({ length: 150 }, (_, i) => `T${i}`))
    const list = await listWith(t, t.account, people(120, 'twin'))
    const id = await couponCampaign(list, folder)
    await t.req('POST', `/campaigns/${id}/send`)
    await sendWithTwoSenders(t, sender, id)
    assert.equal((await campaignRow(t, id))?.status, 3)
    assert.equal(sink.messages.length, 120)
    const codes = sink.messages.map(codeOf)
    assert.ok(codes.every((c) => c.startsWith('T')))
    assert.equal(new Set(codes).size, 120)
    const assigned = (await assignedOf(folder)).filter((c) => c.message_id !== null)
    assert.equal(assigned.length, 120)
    assert.equal(new Set(assigned.map((c) => c.message_id)).size, 120)
  })

  it("never draws from another account's folder", async () => {
    sink.messages.length = 0
    const other = await t.createAccount()
    const theirs = (await t.req('POST', '/coupons/folders', { key: other.key, body: { name: 'X' } })).body
      .id as number
    await t.req('POST', '/coupons/import', { key: other.key, body: { folderId: theirs, codes: ['THEIRS'] } })
    const list = await listWith(t, t.account, people(2, 'foreign'))
    await sendAll(await couponCampaign(list, theirs))
    assert.deepEqual(sink.messages.map(codeOf), ['', ''])
    assert.deepEqual(
      (await assignedOf(theirs)).map((c) => c.message_id),
      [null],
    )
  })

  it('test copies show a sample and consume no code', async () => {
    sink.messages.length = 0
    const folder = await folderWith(['REAL1'])
    const list = await listWith(t, t.account, people(1, 'tc'))
    const id = await couponCampaign(list, folder)
    const res = await t.req('POST', `/campaigns/${id}/test`, { body: { emails: ['qa@example.cz'] } })
    assert.equal(res.status, 200, res.text)
    // The copy is a ledger row: the one sender sends it.
    await sender.runOnce()
    await sink.waitFor(1)
    assert.equal(codeOf(sink.messages[0]!), `TEST-COUPON-${folder}`)
    assert.deepEqual(
      (await assignedOf(folder)).map((c) => c.message_id),
      [null],
    )
    // A folder with nothing left shows what the real mail would: nothing.
    const empty = await folderWith([])
    sink.messages.length = 0
    const id2 = await couponCampaign(list, empty)
    await t.req('POST', `/campaigns/${id2}/test`, { body: { emails: ['qa@example.cz'] } })
    await sender.runOnce()
    await sink.waitFor(1)
    assert.equal(codeOf(sink.messages[0]!), '')
  })
})
