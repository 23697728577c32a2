import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'
import { contacts } from './subscribers.table.js'

/**
 * Whether the account knows the address at all: a contact, or events left by mail to it (transactional
 * recipients need not be contacts). Asked only when its log is empty, to tell "nobody" (404) from "no mail yet".
 */
export async function addressKnown(ex: Executor, accountId: number, email: string): Promise<boolean> {
  const row = await queryOne<{ known: boolean }>(
    ex,
    sql`SELECT EXISTS (SELECT 1 FROM ${contacts} WHERE ${contacts.accountId} = ${accountId}
                         AND ${contacts.email} = ${email})
            OR EXISTS (SELECT 1 FROM events WHERE account_id = ${accountId} AND email = ${email}) AS known`,
  )
  return row?.known === true
}
