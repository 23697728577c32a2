import { eq } from 'drizzle-orm'
import { randomToken } from '../ids.js'
import type { Db } from './client.js'
import { instanceSettings } from './instance.table.js'

/**
 * The link-signing secret lives in the database, created on first start, so every API and worker process of
 * one installation signs and verifies alike without extra configuration.
 */
export async function loadInstanceSecret(db: Db): Promise<string> {
  await db
    .insert(instanceSettings)
    .values({ key: 'link_secret', value: randomToken(32) })
    .onConflictDoNothing()
  const [row] = await db.select().from(instanceSettings).where(eq(instanceSettings.key, 'link_secret'))
  if (!row) throw new Error('instance secret missing after insert')
  return row.value
}
