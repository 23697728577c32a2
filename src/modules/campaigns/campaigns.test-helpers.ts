import { eq } from 'drizzle-orm'
import type { TestApp, TestAccount } from '../../../test/helpers/app.js'
import { segments } from '../segments/index.js'
import { campaigns } from './campaigns.table.js'

/** A list of the account (through the API), its id. */
export async function createList(t: TestApp, account: TestAccount, name = 'List'): Promise<number> {
  const res = await t.req('POST', '/lists', { body: { name }, key: account.key })
  if (res.status !== 200) throw new Error(`list not created: ${res.text}`)
  return res.body.id as number
}

/** A segment row of the list (segments have no write API in this module). */
export async function addSegment(t: TestApp, accountId: number, listId: number, id: string): Promise<void> {
  await t.ctx.db
    .insert(segments)
    .values({ id, accountId, listId, name: `Segment ${id}`, filter: { tag: 'vip' } })
}

/** A valid POST/PUT body sent to `lists`, with `overrides` on top. */
export function campaignBody(
  lists: unknown,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    title: 'Spring newsletter',
    from_name: 'Shop',
    from_email: 'news@shop.example',
    reply_to: 'help@shop.example',
    subject: 'News for *|name|*',
    html_text: '<p>Hello *|name|*</p>',
    recepient_lists: lists,
    ...overrides,
  }
}

/** Puts a campaign into a state only the sender reaches (sent, sending …), straight in the table. */
export async function setCampaign(
  t: TestApp,
  id: number,
  values: Partial<typeof campaigns.$inferInsert>,
): Promise<void> {
  await t.ctx.db.update(campaigns).set(values).where(eq(campaigns.id, id))
}
