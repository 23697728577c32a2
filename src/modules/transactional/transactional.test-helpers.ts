import { generateKeyPairSync } from 'node:crypto'
import { eq, sql } from 'drizzle-orm'
import type { TestApp } from '../../../test/helpers/app.js'
import { queryOne } from '../../core/db/sql.js'
import { domains, type DomainType } from '../domains/index.js'
import { messages } from '../messages/index.js'
import { contacts } from '../subscribers/index.js'

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

/**
 * Polls (bounded) until the batch's ledger rows reach one of the states: `completed` when the sender is done
 * with every row (accepted or refused), `retry` when the relay deferred one and it waits for its retry.
 */
export async function batchState(
  t: TestApp,
  batchId: number,
  states: ('completed' | 'retry')[],
  timeoutMs = 15_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const row = await queryOne<{ open: number; deferred: number }>(
      t.ctx.db,
      sql`SELECT count(*) FILTER (WHERE status IN (0, 4))::int AS open,
                 count(*) FILTER (WHERE status = 4 AND error LIKE 'deferred: %')::int AS deferred
          FROM messages WHERE batch_id = ${batchId}`,
    )
    const state = row?.open === 0 ? 'completed' : row?.deferred ? 'retry' : 'queued'
    if ((states as string[]).includes(state)) return state
    if (Date.now() > deadline) throw new Error(`batch ${batchId}: ${state}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** pg-boss jobs that name the batch (none: the sender claims ledger rows, no job per call). */
export async function countJobs(t: TestApp, batchId: number): Promise<number> {
  const row = await queryOne<{ n: number }>(
    t.ctx.db,
    sql`SELECT count(*)::int AS n FROM pgboss.job WHERE (data->>'batchId')::int = ${batchId}`,
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
