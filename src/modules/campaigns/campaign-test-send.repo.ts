import { eq } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { messages, type MessageRow } from '../messages/index.js'

export async function insertTestMessage(
  ex: Executor,
  m: { accountId: number; contactId: number | null; email: string; subject: string; links: string[] },
): Promise<MessageRow> {
  const [row] = await ex
    .insert(messages)
    .values({
      accountId: m.accountId,
      kind: 'test',
      campaignId: 0,
      contactId: m.contactId,
      email: m.email,
      subject: m.subject,
      links: m.links,
    })
    .returning()
  return row!
}

export async function storeTestCopy(
  ex: Executor,
  id: number,
  rendered: { subject: string; html: string },
): Promise<void> {
  await ex.update(messages).set(rendered).where(eq(messages.id, id))
}
