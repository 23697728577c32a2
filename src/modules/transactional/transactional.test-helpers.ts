import { generateKeyPairSync } from 'node:crypto'
import { eq, sql } from 'drizzle-orm'
import type { TestApp } from '../../../test/helpers/app.js'
import { queryOne } from '../../core/db/sql.js'
import { domains, type DomainType } from '../domains/index.js'
import { messages } from '../messages/index.js'
import { contacts } from '../subscribers/index.js'
import { TRANSACTIONAL_SEND_JOB } from './index.js'

export interface TestDomain {
  name: string
  selector: string
  /** Base64 SubjectPublicKeyInfo, as the DKIM TXT record publishes it. */
  publicKey: string
}

/** A domain row as verification leaves it, with a real RSA key, without DNS. */
export async function addDomain(
  t: TestApp,
  accountId: number,
  name: string,
  opts: { valid?: boolean; type?: DomainType } = {},
): Promise<TestDomain> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  })
  const selector = 'tdtest'
  await t.ctx.db.insert(domains).values({
    accountId,
    name,
    type: opts.type ?? 'transactional',
    valid: opts.valid ?? true,
    dkimSelector: selector,
    dkimPrivateKey: privateKey,
    dkimPublicKey: publicKey.toString('base64'),
  })
  return { name, selector, publicKey: publicKey.toString('base64') }
}

/** A contact suppressed account-wide, as a hard bounce leaves it. */
export async function addSuppressed(t: TestApp, accountId: number, email: string): Promise<void> {
  await t.ctx.db.insert(contacts).values({ accountId, email, suppressed: 'hard_bounce' })
}

export async function messagesOfBatch(t: TestApp, batchId: number) {
  return t.ctx.db.select().from(messages).where(eq(messages.batchId, batchId)).orderBy(messages.id)
}

/** Polls (bounded) until the batch's send job reaches one of the states; returns the state. */
export async function jobState(
  t: TestApp,
  batchId: number,
  states: string[],
  timeoutMs = 15_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const row = await queryOne<{ state: string }>(
      t.ctx.db,
      sql`SELECT state FROM pgboss.job
          WHERE name = ${TRANSACTIONAL_SEND_JOB} AND (data->>'batchId')::int = ${batchId}`,
    )
    if (row && states.includes(row.state)) return row.state
    if (Date.now() > deadline) throw new Error(`send job of batch ${batchId}: ${row?.state ?? 'none'}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

export async function countJobs(t: TestApp, batchId: number): Promise<number> {
  const row = await queryOne<{ n: number }>(
    t.ctx.db,
    sql`SELECT count(*)::int AS n FROM pgboss.job
        WHERE name = ${TRANSACTIONAL_SEND_JOB} AND (data->>'batchId')::int = ${batchId}`,
  )
  return row?.n ?? 0
}

/** A message as the routes take it; tests override what they exercise. */
export function baseMessage(from: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    subject: 'Hello',
    from_name: 'Shop',
    from_email: from,
    html: '<p>Hello</p>',
    to: [{ email: 'someone@example.cz', name: 'Someone' }],
    ...overrides,
  }
}
