import { sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import type { SignalKind } from './signals.table.js'

const SIGNAL_KINDS: readonly string[] = ['purchase', 'event', 'subscribe', 'tag'] satisfies SignalKind[]

export const isSignalKind = (kind: string): kind is SignalKind => SIGNAL_KINDS.includes(kind)

/**
 * `EXISTS` (as SQL) when an automation of the account listens for signals of this kind: the condition every
 * statement that writes signals puts on its insert. `accountId` may be a column of the statement's rows.
 */
export function listenedFor(accountId: number | SQL, kind: SignalKind): SQL {
  const account = typeof accountId === 'number' ? sql`${accountId}::int` : accountId
  return sql`EXISTS (SELECT 1 FROM signal_listeners sl WHERE sl.account_id = ${account} AND sl.kind = ${kind})`
}

/**
 * Side effect: the pipeline listens for `kind` from now on, or for nothing (undefined: paused, deleted, or a
 * trigger that is not a signal): its row written, or removed.
 */
export async function setListener(
  ex: Executor,
  pipelineId: number,
  accountId: number,
  kind: SignalKind | undefined,
): Promise<void> {
  await ex.execute(
    kind
      ? sql`INSERT INTO signal_listeners (pipeline_id, account_id, kind)
            VALUES (${pipelineId}::int, ${accountId}::int, ${kind})
            ON CONFLICT (pipeline_id) DO UPDATE SET account_id = excluded.account_id, kind = excluded.kind`
      : sql`DELETE FROM signal_listeners WHERE pipeline_id = ${pipelineId}::int`,
  )
}
