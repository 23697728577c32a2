import { eq, sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'
import { messages, type ContactForMerge, type MessageRow } from '../messages/index.js'

export async function contactByEmail(
  ex: Executor,
  accountId: number,
  email: string,
): Promise<(ContactForMerge & { id: number }) | undefined> {
  return queryOne<ContactForMerge & { id: number }>(
    ex,
    sql`SELECT id, email, name, surname, gender, company, city, street, zip, country, phone, pretitle,
               surtitle, birthday, nameday, custom_fields
        FROM contacts WHERE account_id = ${accountId} AND email = ${email}`,
  )
}

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

export async function storeTestHtml(ex: Executor, id: number, html: string): Promise<void> {
  await ex.update(messages).set({ html }).where(eq(messages.id, id))
}
