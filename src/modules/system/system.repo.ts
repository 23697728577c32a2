import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'

/** The cheapest round trip that proves the database answers; throws when it does not. */
export async function pingDatabase(ex: Executor): Promise<void> {
  await ex.execute(sql`SELECT 1`)
}
