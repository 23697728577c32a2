import { eq } from 'drizzle-orm'
import { randomToken } from '../ids.js'
import type { Db } from './client.js'
import { instanceSettings } from './instance.table.js'

/** The installation secrets, each with its own purpose so one can be replaced without touching the others. */
export type InstanceSecretName = 'link_secret' | 'erasure_secret'

/**
 * Installation secrets live in the database, created on first start, so every API and worker process of
 * one installation signs and verifies alike without extra configuration.
 */
export async function loadInstanceSecret(db: Db, name: InstanceSecretName = 'link_secret'): Promise<string> {
  await db
    .insert(instanceSettings)
    .values({ key: name, value: randomToken(32) })
    .onConflictDoNothing()
  const [row] = await db.select().from(instanceSettings).where(eq(instanceSettings.key, name))
  if (!row) throw new Error('instance secret missing after insert')
  return row.value
}
