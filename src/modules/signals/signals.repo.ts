import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryRows } from '../../core/db/sql.js'
import { listenedFor } from './signal-listeners.repo.js'
import type { SignalKind } from './signals.table.js'

export interface NewSignal {
  accountId: number
  kind: SignalKind
  /** The person the signal is about, already trimmed and lower-cased. */
  email: string
  payload: Record<string, unknown>
  at: Date
}

/**
 * Side effect: appends one row to the signals outbox on `ex` (pass the open transaction of the change) when an
 * automation of the account listens for its kind (signal-listeners.table.ts); whether it did.
 */
export async function insertSignal(ex: Executor, s: NewSignal): Promise<boolean> {
  const rows = await queryRows<{ id: string }>(
    ex,
    sql`INSERT INTO signals (account_id, kind, email, payload, created_at)
        SELECT ${s.accountId}::int, ${s.kind}, ${s.email}, ${JSON.stringify(s.payload)}::jsonb,
               ${s.at.toISOString()}::timestamptz
        WHERE ${listenedFor(s.accountId, s.kind)}
        RETURNING id`,
  )
  return rows.length > 0
}

/** Side effect: replaces the address on the account's signals (GDPR erasure). */
export async function pseudonymiseSignals(ex: Executor, accountId: number, email: string, pseudonym: string) {
  await ex.execute(
    sql`UPDATE signals SET email = ${pseudonym} WHERE account_id = ${accountId}::int AND email = ${email}`,
  )
}
