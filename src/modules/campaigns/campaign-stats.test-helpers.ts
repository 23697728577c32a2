import type { TestApp } from '../../../test/helpers/app.js'
import type { ManualClock } from '../../core/clock.js'
import { addToCounters } from '../events/index.js'
import { createEventRecorder, insertEvent } from '../outcomes/index.js'
import { findTrackedMessage, messages, type MessageRow, type NewMessage } from '../messages/index.js'
import { trackingLinks } from '../tracking/index.js'
import { transactions } from '../transactions/index.js'
import { campaigns } from './campaigns.table.js'

export const LINKS = ['https://shop.example/a', 'https://shop.example/b']
export const SUBJECT = 'Spring sale'
export const at = (iso: string) => new Date(iso)

/** A campaign row as sending leaves it (status 3, links frozen). */
export async function insertCampaign(
  t: TestApp,
  accountId: number,
  title = 'Spring',
  lists: number[] = [],
): Promise<number> {
  const [row] = await t.ctx.db
    .insert(campaigns)
    .values({
      accountId,
      title,
      subject: SUBJECT,
      fromName: 'Shop',
      fromEmail: 'news@shop.example',
      replyTo: 'news@shop.example',
      htmlText: '<a href="https://shop.example/a">a</a> <a href="https://shop.example/b">b</a>',
      targets: { lists, segments: [] },
      status: 3,
      links: LINKS,
      recipients: 0,
    })
    .returning({ id: campaigns.id })
  return row!.id
}

/**
 * Message rows of a campaign as the sender leaves them: accepted rows (status 1) with their `send` event and
 * `inject` counted, which the campaign sender writes in bulk itself; other statuses just as rows.
 */
export async function insertRecipients(
  t: TestApp,
  accountId: number,
  campaignId: number,
  emails: string[],
  sentAt: Date,
  status: 0 | 1 | 2 | 3 = 1,
): Promise<MessageRow[]> {
  const rows: NewMessage[] = emails.map((email) => ({
    accountId,
    kind: 'campaign',
    campaignId,
    email,
    subject: SUBJECT,
    status,
    sentAt: status === 1 || status === 2 ? sentAt : null,
  }))
  const inserted = await t.ctx.db.insert(messages).values(rows).returning()
  inserted.sort((a, b) => a.id - b.id)
  if (status === 1) {
    for (const m of inserted) {
      await insertEvent(t.ctx.db, { ...ref(m), messageId: m.id, event: 'send', occurredAt: sentAt })
      await addToCounters(t.ctx.db, { campaignId }, m.id, { inject: 1 })
    }
  }
  return inserted
}

const ref = (m: MessageRow) => ({
  accountId: m.accountId,
  campaignId: m.campaignId,
  pipelineId: m.pipelineId,
  actionId: m.actionId,
  contactId: m.contactId,
  email: m.email,
})

/**
 * Drives events the way they really arrive: the tracking pages for opens, clicks (their targets come from the
 * campaign) and one-click unsubscribes; the recorder, as the bounce listener calls it, for the rest.
 */
export function driver(t: TestApp, clock: ManualClock) {
  const links = trackingLinks(t.ctx)
  const recorder = createEventRecorder(t.ctx)
  const path = (url: string) => url.slice(t.ctx.config.publicUrl.length)
  const tracked = async (m: MessageRow) => (await findTrackedMessage(t.ctx.dbHandle, m.id))!
  return {
    async open(m: MessageRow, when: string) {
      clock.set(at(when))
      const res = await t.req('GET', path(links.open(m.id)), { key: null })
      if (res.status !== 200) throw new Error(`open pixel answered ${res.status}`)
    },
    async unsubscribe(m: MessageRow, when: string) {
      clock.set(at(when))
      const res = await t.req('POST', path(links.unsubscribe(m.id)), {
        key: null,
        body: 'List-Unsubscribe=One-Click',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
      if (res.status !== 200) throw new Error(`one-click unsubscribe answered ${res.status}`)
    },
    async click(m: MessageRow, index: number, when: string) {
      clock.set(at(when))
      const res = await t.req('GET', path(links.click(m.id, index)), { key: null })
      if (res.status !== 302 || res.headers.location !== LINKS[index])
        throw new Error(`click ${index} answered ${res.status} ${String(res.headers.location)}`)
    },
    async bounce(m: MessageRow, kind: 'hard' | 'soft', when: string) {
      clock.set(at(when))
      const message = await tracked(m)
      await t.ctx.db.transaction((tx) => recorder.bounced(tx, message, kind, `5.1.1 ${kind}`))
    },
    async complain(m: MessageRow, when: string) {
      clock.set(at(when))
      const message = await tracked(m)
      await t.ctx.db.transaction((tx) => recorder.complained(tx, message, 'abuse'))
    },
    async sent(m: MessageRow, when: string) {
      clock.set(at(when))
      await recorder.sent(t.ctx.db, await tracked(m))
    },
  }
}

export async function insertPurchase(
  t: TestApp,
  accountId: number,
  orderId: string,
  email: string,
  amount: number,
  when: string,
): Promise<void> {
  await t.ctx.db
    .insert(transactions)
    .values({ accountId, orderId, email, amount: String(amount), occurredAt: at(when) })
}

export const R = (i: number) => `r${i}@example.cz`

/**
 * The campaign of the statistics tests, each number worked out by hand in the test files:
 * r0…r8 accepted (inject 9), `refused@` refused by the relay, `suppressed@` skipped.
 *  opens   r0 ×3 (03-10 12:00, 13:00, 03-12 12:00), r1 (03-10 14:00), r2 (03-11 09:00),
 *          r3 ×2 (03-11 10:00, 03-12 23:59:59.999), r4 (03-13 00:00)     → open 5, total_open 8
 *  clicks  r0 link 0 (03-11 08:00) and link 1 (03-12 08:00), r1 (03-12 09:00) → click 2, total_click 3
 *  unsub   r2 twice (03-11 09:30)                                           → unsub 1
 *  spam    r3 twice (03-11 10:30)                                           → spam 1
 *  bounce  r7 hard twice (03-10 15:00); r8 soft (03-10 15:00), soft (03-11 11:00), hard (03-11 11:30);
 *          refused@ hard (03-11 12:00), not counted: it was never injected → bounce 2, hard_bounce 2
 *  purchases r0: 03-11 07:59 (before the click) 7, 03-12 08:00 100.1, 03-18 08:00 (exactly 7 days) 50.2,
 *          03-18 08:00:01 999; r1: 03-12 11:00 25.3; r4 (never clicked) 70; r1 in another account 1000
 *                                                                           → conversions 3, value 175.6
 */
export async function buildCampaignScenario(t: TestApp, clock: ManualClock, otherAccountId: number) {
  const emails = Array.from({ length: 9 }, (_, i) => R(i))
  // The recipients are contacts of a list, so unsubscribes and bounces have subscriptions to change.
  const list = (await t.req('POST', '/lists', { body: { name: 'News' } })).body as { id: number }
  const people = [...emails, 'refused@example.cz'].map((email) => ({ email }))
  await t.req('POST', `/lists/${list.id}/subscribe-bulk`, { body: { subscriber_data: people } })
  const id = await insertCampaign(t, t.account.id, 'Spring', [list.id])
  const sentAt = at('2026-03-10T08:00:00.000Z')
  const r = await insertRecipients(t, t.account.id, id, emails, sentAt)
  const [refused] = await insertRecipients(t, t.account.id, id, ['refused@example.cz'], sentAt, 2)
  await insertRecipients(t, t.account.id, id, ['suppressed@example.cz'], sentAt, 3)
  const m = (i: number) => r[i]!
  const d = driver(t, clock)

  await d.open(m(0), '2026-03-10T12:00:00.000Z')
  await d.open(m(0), '2026-03-10T13:00:00.000Z')
  await d.open(m(1), '2026-03-10T14:00:00.000Z')
  await d.bounce(m(7), 'hard', '2026-03-10T15:00:00.000Z')
  await d.bounce(m(7), 'hard', '2026-03-10T15:00:00.000Z')
  await d.bounce(m(8), 'soft', '2026-03-10T15:00:00.000Z')
  await d.click(m(0), 0, '2026-03-11T08:00:00.000Z')
  await d.open(m(2), '2026-03-11T09:00:00.000Z')
  await d.unsubscribe(m(2), '2026-03-11T09:30:00.000Z')
  await d.unsubscribe(m(2), '2026-03-11T09:31:00.000Z')
  await d.open(m(3), '2026-03-11T10:00:00.000Z')
  await d.complain(m(3), '2026-03-11T10:30:00.000Z')
  await d.complain(m(3), '2026-03-11T10:31:00.000Z')
  await d.bounce(m(8), 'soft', '2026-03-11T11:00:00.000Z')
  await d.bounce(m(8), 'hard', '2026-03-11T11:30:00.000Z')
  await d.bounce(refused!, 'hard', '2026-03-11T12:00:00.000Z')
  await d.click(m(0), 1, '2026-03-12T08:00:00.000Z')
  await d.click(m(1), 0, '2026-03-12T09:00:00.000Z')
  await d.open(m(0), '2026-03-12T12:00:00.000Z')
  await d.open(m(3), '2026-03-12T23:59:59.999Z')
  await d.open(m(4), '2026-03-13T00:00:00.000Z')

  const buy = (order: string, email: string, amount: number, when: string, account = t.account.id) =>
    insertPurchase(t, account, order, email, amount, when)
  await buy('o1', R(0), 7, '2026-03-11T07:59:00.000Z')
  await buy('o2', R(0), 100.1, '2026-03-12T08:00:00.000Z')
  await buy('o3', R(0), 50.2, '2026-03-18T08:00:00.000Z')
  await buy('o4', R(0), 999, '2026-03-18T08:00:01.000Z')
  await buy('o5', R(1), 25.3, '2026-03-12T11:00:00.000Z')
  await buy('o6', R(4), 70, '2026-03-12T11:00:00.000Z')
  await buy('o7', R(1), 1000, '2026-03-12T11:00:00.000Z', otherAccountId)

  clock.set(at('2026-03-13T10:00:00.000Z'))
  return { id, recipients: r, refused: refused!, driver: d }
}
