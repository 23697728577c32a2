import assert from 'node:assert/strict'
import { sql } from 'drizzle-orm'
import type { TestApp, TestAccount } from '../../../test/helpers/app.js'
import { queryOne, queryRows } from '../../core/db/sql.js'
import { addDomain, type TestDomain } from '../transactional/transactional.test-helpers.js'
import { startCampaignSender, type Sender as CampaignSender } from '../../../test/helpers/sender.js'

export interface Person {
  email: string
  name?: string
  city?: string
  vokativ?: string
  status?: number
}

/** A list with these subscribers (through the API), its id. */
export async function listWith(t: TestApp, account: TestAccount, people: Person[]): Promise<number> {
  const list = await t.req('POST', '/lists', { body: { name: 'List' }, key: account.key })
  if (list.status !== 200) throw new Error(list.text)
  const id = list.body.id as number
  for (let i = 0; i < people.length; i += 3000) {
    const res = await t.req('POST', `/lists/${id}/subscribe-bulk`, {
      key: account.key,
      body: { subscriber_data: people.slice(i, i + 3000) },
    })
    if (res.status !== 200) throw new Error(res.text)
  }
  return id
}

/** The campaign sending domain, verified, with a real DKIM key. */
export function sendingDomain(t: TestApp, account: TestAccount, name = 'shop.example'): Promise<TestDomain> {
  return addDomain(t, account.id, name, { type: 'sending' })
}

export const CAMPAIGN_HTML =
  '<html><head><style>p { color: #333 }</style></head><body>' +
  '<p>Hello *|name|*!</p><p><a href="https://shop.example/sale?x=1&amp;y=2">Sale</a></p>' +
  '<p><a href="*|UNSUB|*">Unsubscribe</a> <a href="*|WEBVERSION|*">Web</a></p></body></html>'

/** A campaign to these targets (POST /campaigns), its id. */
export async function createCampaign(
  t: TestApp,
  account: TestAccount,
  targets: unknown,
  overrides: Record<string, unknown> = {},
): Promise<number> {
  const res = await t.req('POST', '/campaigns', {
    key: account.key,
    body: {
      title: 'Spring',
      from_name: 'Shop',
      from_email: 'news@shop.example',
      reply_to: 'help@shop.example',
      subject: 'Hi *|name|*',
      html_text: CAMPAIGN_HTML,
      recepient_lists: targets,
      ...overrides,
    },
  })
  if (res.status !== 200) throw new Error(res.text)
  return res.body.id as number
}

export async function campaignRow(t: TestApp, id: number) {
  return queryOne<{ status: number; error: string | null; recipients: number; paused_at: Date | null }>(
    t.ctx.db,
    sql`SELECT status, error, recipients, paused_at FROM campaigns WHERE id = ${id}`,
  )
}

/**
 * The campaign's `error` field (contract §4) as the API shows it, after asserting that its `GET /campaigns`
 * list item and its detail show the same one.
 */
export async function shownError(t: TestApp, account: TestAccount, id: number) {
  const detail = await t.req('GET', `/campaigns/${id}`, { key: account.key })
  if (detail.status !== 200) throw new Error(detail.text)
  const list = await t.req('GET', `/campaigns?filters[id]=${id}`, { key: account.key })
  if (list.status !== 200 || list.body.length !== 1) throw new Error(list.text)
  assert.deepEqual(list.body[0].error, detail.body.error, 'the list item and the detail agree')
  return detail.body.error as { code: string; message: string } | null
}

/** Polls (bounded) until the campaign reaches one of the statuses. */
export async function waitForStatus(t: TestApp, id: number, statuses: number[], timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const row = await campaignRow(t, id)
    if (row && statuses.includes(row.status)) return row
    if (Date.now() > deadline) throw new Error(`campaign ${id} is ${JSON.stringify(row)}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

export async function ledger(t: TestApp, id: number) {
  return queryRows<{ id: number; email: string; status: number }>(
    t.ctx.db,
    sql`SELECT id::int, email, status FROM messages WHERE campaign_id = ${id} ORDER BY id`,
  )
}

/**
 * Runs `sender` and a second sender on the same database side by side (batches of 7, so they interleave) until
 * campaign `id` is sent or 40 rounds have passed.
 */
export async function sendWithTwoSenders(t: TestApp, sender: CampaignSender, id: number): Promise<void> {
  const second = startCampaignSender(t.ctx, { loop: false, batchSize: 7 })
  try {
    for (let i = 0; i < 40 && (await campaignRow(t, id))?.status !== 3; i++) {
      await Promise.all([sender.runOnce(), second.runOnce()])
    }
  } finally {
    await second.stop()
  }
}
