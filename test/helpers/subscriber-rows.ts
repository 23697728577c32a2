import { sql } from 'drizzle-orm'
import type { Db } from '../../src/core/db/client.js'
import { lists } from '../../src/modules/lists/index.js'
import { contacts, memberships } from '../../src/modules/subscribers/index.js'
import type { ContactRow, MembershipRow } from '../../src/modules/subscribers/index.js'

/**
 * Rows written straight into the tables, so read tests do not depend on the write endpoints.
 * Times given as text keep their microseconds (a JS Date would drop them).
 */
export type ContactInput = Partial<Omit<typeof contacts.$inferInsert, 'accountId' | 'insertedAt'>> & {
  email: string
  insertedAt?: string
}
export interface MembershipInput {
  status?: number
  source?: string
  subscribedAt?: string
  unsubscribedAt?: string | null
}

export function subscriberRows(db: Db) {
  return {
    async list(accountId: number, name = 'List'): Promise<number> {
      const [row] = await db.insert(lists).values({ accountId, name }).returning({ id: lists.id })
      return row!.id
    },
    async contact(accountId: number, input: ContactInput): Promise<ContactRow> {
      const { insertedAt, ...rest } = input
      const [row] = await db
        .insert(contacts)
        .values({
          ...rest,
          accountId,
          ...(insertedAt ? { insertedAt: sql`${insertedAt}::timestamptz` } : {}),
        })
        .returning()
      return row!
    },
    async join(contact: ContactRow, listId: number, input: MembershipInput = {}): Promise<MembershipRow> {
      const [row] = await db
        .insert(memberships)
        .values({
          accountId: contact.accountId,
          listId,
          contactId: contact.id,
          status: input.status ?? 1,
          source: input.source ?? 'api',
          ...(input.subscribedAt ? { subscribedAt: sql`${input.subscribedAt}::timestamptz` } : {}),
          ...(input.unsubscribedAt ? { unsubscribedAt: sql`${input.unsubscribedAt}::timestamptz` } : {}),
        })
        .returning()
      return row!
    },
  }
}
