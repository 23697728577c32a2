import { sql } from 'drizzle-orm'
import type { DbHandle, Executor } from '../../core/db/client.js'
import { queryRows, queryRowsOn } from '../../core/db/sql.js'
import { erasedAddressHash, isErasedStandIn } from './erased-suppressions.js'
import { erasedAmong } from './erased-suppressions.repo.js'

/**
 * What mail that bounced, was complained about or unsubscribed does to a person (contract §3): hard bounces and
 * complaints suppress the address account-wide and mark its live memberships 4 or 5; soft bounces only count.
 * Addresses that are not contacts yet (transactional recipients) become contacts without lists, so the
 * suppression has a row to live on.
 */

/**
 * The contact of the address, made when there is none; null for an erased address's stand-in, which mail sent
 * before the erasure still names: a report about such mail must not bring a contact of it back (the erasure
 * remembered the address's suppression, erased-suppressions.repo.ts).
 */
async function ensureContact(
  ex: Executor,
  accountId: number,
  email: string,
  now: Date,
): Promise<number | null> {
  if (isErasedStandIn(email)) return null
  const [row] = await queryRows<{ id: number }>(
    ex,
    sql`INSERT INTO contacts (account_id, email, inserted_at, updated_at)
        VALUES (${accountId}, ${email}, ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz)
        ON CONFLICT (account_id, email) DO UPDATE SET updated_at = contacts.updated_at
        RETURNING id`,
  )
  return row!.id
}

/** The bounce's words into bounce_message; a bounce without any (hard or soft) keeps the last ones. */
const lastWords = (message: string | null) => sql`bounce_message = coalesce(${message}, bounce_message)`

/** Side effects: suppresses the contact, counts the bounce, moves subscribed/unconfirmed memberships to 4. */
export async function applyHardBounce(
  ex: Executor,
  accountId: number,
  email: string,
  message: string | null,
  now: Date,
) {
  const id = await ensureContact(ex, accountId, email, now)
  if (id === null) return null
  await ex.execute(sql`UPDATE contacts SET suppressed = 'hard_bounce', bounced_hard = bounced_hard + 1,
                         ${lastWords(message)}, updated_at = ${now.toISOString()}::timestamptz
                       WHERE id = ${id}`)
  await ex.execute(sql`UPDATE memberships SET status = 4, updated_at = ${now.toISOString()}::timestamptz
                       WHERE contact_id = ${id} AND status IN (1, 6)`)
  return id
}

/** Side effects: suppresses the contact as a complainer and moves its live memberships to 5. */
export async function applyComplaint(ex: Executor, accountId: number, email: string, now: Date) {
  const id = await ensureContact(ex, accountId, email, now)
  if (id === null) return null
  await ex.execute(sql`UPDATE contacts SET suppressed = 'complaint', updated_at = ${now.toISOString()}::timestamptz
                       WHERE id = ${id}`)
  await ex.execute(sql`UPDATE memberships SET status = 5, updated_at = ${now.toISOString()}::timestamptz
                       WHERE contact_id = ${id} AND status IN (1, 2, 6)`)
  return id
}

/** Side effect: counts a soft bounce (bounce_soft); the address stays deliverable. */
export async function applySoftBounce(
  ex: Executor,
  accountId: number,
  email: string,
  message: string | null,
  now: Date,
) {
  await ex.execute(sql`UPDATE contacts SET bounce_soft = bounce_soft + 1, ${lastWords(message)},
                         updated_at = ${now.toISOString()}::timestamptz
                       WHERE account_id = ${accountId} AND email = ${email}`)
}

/**
 * Side effect: unsubscribes the person from the given lists (every list of the account when null).
 * Returns the list ids whose membership changed, so a repeated one-click POST changes nothing.
 */
export async function unsubscribeEverywhere(
  ex: Executor,
  accountId: number,
  email: string,
  listIds: number[] | null,
  now: Date,
): Promise<number[]> {
  const rows = await queryRows<{ list_id: number }>(
    ex,
    sql`UPDATE memberships m SET status = 2, unsubscribed_at = ${now.toISOString()}::timestamptz,
               updated_at = ${now.toISOString()}::timestamptz
        FROM contacts c
        WHERE c.id = m.contact_id AND c.account_id = ${accountId} AND c.email = ${email}
          AND m.status IN (1, 6)
          ${listIds ? sql`AND m.list_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(listIds)}::jsonb)::int)` : sql``}
        RETURNING m.list_id`,
  )
  return rows.map((r) => r.list_id)
}

/** One address of one account, as suppressedAmong takes it. */
export interface AccountAddress {
  accountId: number
  email: string
}

/** The key suppressedAmong answers an address under. */
export const addressKey = (accountId: number, email: string) => `${accountId} ${email}`

/**
 * The addresses that must get no marketing or transactional mail: contacts suppressed by a hard bounce or
 * complaint, and erased addresses remembered as such (by keyed hash, erased-suppressions.repo.ts). Any number
 * of accounts in one statement (the transactional intake asks for the calls of one event-loop turn together);
 * answers addressKey(account, email) of each suppressed one. Prepared when given the handle (the intake asks
 * outside any transaction, several times a second).
 */
export async function suppressedAmong(
  on: DbHandle | Executor,
  erasureSecret: string,
  addresses: AccountAddress[],
): Promise<Set<string>> {
  const unique = new Map<string, AccountAddress>()
  for (const a of addresses) unique.set(addressKey(a.accountId, a.email), a)
  if (unique.size === 0) return new Set()
  const pairs = [...unique.values()].map(({ accountId, email }) => ({
    a: accountId,
    email,
    hash: erasedAddressHash(erasureSecret, accountId, email),
  }))
  const rows = await queryRowsOn<{ a: number; email: string }>(
    on,
    sql`WITH p AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify(pairs)}::jsonb) AS p(a int, email text, hash text))
        SELECT p.a, p.email FROM p
          JOIN contacts c ON c.account_id = p.a AND c.email = p.email AND c.suppressed IS NOT NULL
        UNION ${erasedAmong(sql`p`)}`,
  )
  return new Set(rows.map((r) => addressKey(Number(r.a), r.email)))
}
