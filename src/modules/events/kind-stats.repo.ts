import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryOne } from '../../core/db/sql.js'
import type { MessageKind } from '../messages/index.js'
import { COUNTER_NAMES, type Counters } from './counters.repo.js'

/** The kinds counted here: `messages_account_kind_sent_idx` holds only their rows. */
export type CountedKind = Extract<MessageKind, 'transactional' | 'confirmation'>

/**
 * Contract §5's counts over an account's mail of one kind (transactional, or double opt-in confirmation)
 * sent in [from, to): mail outside campaigns and automations has no counter rows, so the counts come from
 * the message rows themselves. Unique figures are their milestone columns (stamped once per message, as the
 * counters count them); `total_open`/`total_click` count the open and click events of the opened or clicked
 * messages only. Cost: one range scan of `messages_account_kind_sent_idx` plus a heap read per message in
 * the range, and an `events_message_idx` probe per opened or clicked one: linear in the account's mail of
 * that kind in the range (campaign mail, the bulk of the table, is never read).
 */
export async function readKindCounters(
  ex: Executor,
  accountId: number,
  kind: CountedKind,
  range: { from?: Date | undefined; to?: Date | undefined } = {},
): Promise<Counters> {
  const from = range.from ? sql`AND sent_at >= ${range.from.toISOString()}::timestamptz` : sql``
  const to = range.to ? sql`AND sent_at < ${range.to.toISOString()}::timestamptz` : sql``
  // A message the relay refused (status 2) was never injected; its bounce stays out, as in the counters.
  const row = await queryOne<Record<string, number | string>>(
    ex,
    sql`WITH m AS (
          SELECT id, status, first_open_at, first_click_at, bounced_at, soft_bounced_at, complained_at,
                 unsubscribed_at
          FROM messages
          WHERE account_id = ${accountId} AND kind = ${kind} AND sent_at IS NOT NULL ${from} ${to})
        SELECT count(*) FILTER (WHERE status = 1)::float8 AS inject,
               count(*) FILTER (WHERE status = 1
                 AND (bounced_at IS NOT NULL OR soft_bounced_at IS NOT NULL))::float8 AS bounce,
               count(*) FILTER (WHERE status = 1 AND bounced_at IS NOT NULL)::float8 AS hard_bounce,
               count(*) FILTER (WHERE status = 1 AND soft_bounced_at IS NOT NULL)::float8 AS soft_bounce,
               count(*) FILTER (WHERE first_open_at IS NOT NULL)::float8 AS open,
               (SELECT count(*) FROM events e
                 WHERE e.message_id IN (SELECT id FROM m WHERE first_open_at IS NOT NULL)
                   AND e.event = 'open')::float8 AS total_open,
               count(*) FILTER (WHERE first_click_at IS NOT NULL)::float8 AS click,
               (SELECT count(*) FROM events e
                 WHERE e.message_id IN (SELECT id FROM m WHERE first_click_at IS NOT NULL)
                   AND e.event = 'click')::float8 AS total_click,
               count(*) FILTER (WHERE complained_at IS NOT NULL)::float8 AS spam,
               count(*) FILTER (WHERE unsubscribed_at IS NOT NULL)::float8 AS unsub
        FROM m`,
  )
  const out = {} as Counters
  for (const n of COUNTER_NAMES) out[n] = Number(row?.[n] ?? 0)
  return out
}
