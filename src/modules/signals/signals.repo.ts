import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { signals, type SignalKind } from './signals.table.js'

export interface NewSignal {
  accountId: number
  kind: SignalKind
  /** The person the signal is about, already trimmed and lower-cased. */
  email: string
  payload: Record<string, unknown>
  at: Date
}

/** Side effect: appends one row to the signals outbox on `ex` (pass the open transaction of the change). */
export async function insertSignal(ex: Executor, s: NewSignal): Promise<number> {
  const [row] = await ex
    .insert(signals)
    .values({ accountId: s.accountId, kind: s.kind, email: s.email, payload: s.payload, createdAt: s.at })
    .returning({ id: signals.id })
  return row!.id
}

/** Side effect: replaces the address on the account's signals (GDPR erasure). */
export async function pseudonymiseSignals(ex: Executor, accountId: number, email: string, pseudonym: string) {
  await ex.execute(
    sql`UPDATE signals SET email = ${pseudonym} WHERE account_id = ${accountId}::int AND email = ${email}`,
  )
}
