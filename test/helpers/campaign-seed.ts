import { generateKeyPairSync } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { Db } from '../../src/core/db/client.js'
import { queryOne } from '../../src/core/db/sql.js'
import type { Installation } from './processes.js'

/**
 * What a worker-process test needs before it can send: a verified sending domain `shop.example` with a DKIM key
 * (selector `selector`), and a list of `recipients` subscribed contacts r1@example.cz … rN@example.cz. Written
 * straight into the database, as the workers under test read it. Returns the list id.
 */
export async function seedSendingList(
  db: Db,
  accountId: number,
  opts: { recipients: number; selector: string; listName: string },
): Promise<number> {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  })
  await db.execute(sql`INSERT INTO domains (account_id, name, type, valid, dkim_selector, dkim_private_key, dkim_public_key)
    VALUES (${accountId}, 'shop.example', 'sending', true, ${opts.selector}, ${privateKey}, 'unused')`)
  const list = await queryOne<{ id: number }>(
    db,
    sql`INSERT INTO lists (account_id, name) VALUES (${accountId}, ${opts.listName}) RETURNING id`,
  )
  await db.execute(sql`INSERT INTO contacts (account_id, email, name)
    SELECT ${accountId}, 'r' || g || '@example.cz', 'R' || g FROM generate_series(1, ${opts.recipients}) g`)
  await db.execute(sql`INSERT INTO memberships (account_id, list_id, contact_id, status)
    SELECT ${accountId}, ${list!.id}, id, 1 FROM contacts WHERE account_id = ${accountId}`)
  return list!.id
}

/**
 * The environment of a worker process under test: the installation's, sending to `smtpUrl` with one signing thread
 * and a 2 s lease, so a killed worker's batch is taken over quickly.
 */
export const workerEnvOf = (inst: Installation, smtpUrl: string) => ({
  ...inst.env,
  SMTP_URL: smtpUrl,
  SEND_LEASE_SECONDS: '2',
  SEND_THREADS: '1',
})
