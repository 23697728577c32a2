import { eq } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { messages } from '../messages/index.js'
import { messageBatches } from './transactional.table.js'

export type BatchRow = typeof messageBatches.$inferSelect
export type NewBatch = Omit<typeof messageBatches.$inferInsert, 'id' | 'createdAt'>

export async function insertBatch(ex: Executor, values: NewBatch, now: Date): Promise<number> {
  const [row] = await ex
    .insert(messageBatches)
    .values({ ...values, createdAt: now })
    .returning({ id: messageBatches.id })
  return row!.id
}

/**
 * The cc and bcc addresses that went with `email`'s message of a batch (one SMTP transaction, one VERP
 * address), lower-cased as stored. Reads only that column: a batch row may hold megabytes of attachments.
 */
export async function copiesOfRecipient(ex: Executor, batchId: number, email: string): Promise<string[]> {
  const [row] = await ex
    .select({ copies: messageBatches.copies })
    .from(messageBatches)
    .where(eq(messageBatches.id, batchId))
  const copies = row?.copies[email.toLowerCase()]
  return copies ? [...copies.cc, ...copies.bcc] : []
}

export async function findBatch(ex: Executor, id: number): Promise<BatchRow | undefined> {
  const [row] = await ex.select().from(messageBatches).where(eq(messageBatches.id, id))
  return row
}

/**
 * Side effect: keeps what this recipient is sent (subject, HTML with tracked links) and the original URLs by
 * click index, before the relay sees it: the web version shows it and click redirects read the links, and a
 * recipient may click before the relay's answer is recorded.
 */
export async function storeRendered(
  ex: Executor,
  messageId: number,
  rendered: { subject: string; html: string | null; links: string[] },
): Promise<void> {
  await ex
    .update(messages)
    .set({ subject: rendered.subject, html: rendered.html, links: rendered.links })
    .where(eq(messages.id, messageId))
}
