import { eq } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { messages } from '../messages/index.js'

/** Side effect: what a queued test copy keeps of its own: its subject as sent, web version and links. */
export async function storeTestCopy(
  ex: Executor,
  id: number,
  copy: { subject: string; html: string; links: string[] },
): Promise<void> {
  await ex.update(messages).set(copy).where(eq(messages.id, id))
}
