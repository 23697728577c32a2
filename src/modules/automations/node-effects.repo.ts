import { getTableColumns, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryRows } from '../../core/db/sql.js'
import { contactMergeColumns, type ContactForMerge } from '../messages/index.js'
import { CONTACT_FIELDS } from '../segments/index.js'
import { listenedFor } from '../signals/index.js'
import { contacts } from '../subscribers/index.js'

/** The SQL of node effects on subscribers (tags, lists, fields) and what the engine reads about them. */

const ts = (d: Date) => sql`${d.toISOString()}::timestamptz`
/** The chain (run-chain.ts) the signal of the contact with id `contactId` carries, from `chains` by contact id. */
const signalChainSql = (contactId: SQL, chains: Record<string, number>): SQL =>
  sql`coalesce((${JSON.stringify(chains)}::jsonb ->> (${contactId})::text)::int, 0)`
const idsOf = (ids: readonly number[]): SQL =>
  sql`(SELECT (jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))::int)`

/**
 * A `locked` CTE: the contacts of `ids` row-locked in address order before a node writes them. The bulk
 * subscriber writes lock theirs in that order (inLockOrder, bulk-batch.repo.ts); a node's UPDATE alone locked in
 * its plan's order, and deadlocked with them four tries in a row under load (npm run race, RACE_FILL=60000).
 */
const lockedInAddressOrder = (ids: readonly number[]): SQL =>
  sql`locked AS MATERIALIZED (
        SELECT id FROM contacts WHERE id IN ${idsOf(ids)} ORDER BY email COLLATE "C" FOR NO KEY UPDATE)`

export interface Subject extends ContactForMerge {
  contactId: number
  /** Status in the pipeline's list (null: not a member). */
  status: number | null
  suppressed: string | null
  tags: string[]
}

/** The contacts of `contactIds` with their status in `listId`, keyed by contact id. */
export async function loadSubjects(
  ex: Executor,
  listId: number,
  contactIds: readonly number[],
): Promise<Map<number, Subject>> {
  if (contactIds.length === 0) return new Map()
  const rows = await queryRows<Subject>(
    ex,
    sql`SELECT c.id AS "contactId", m.status, c.suppressed, c.tags, ${contactMergeColumns('c')}
        FROM contacts c
        LEFT JOIN memberships m ON m.contact_id = c.id AND m.list_id = ${listId}
        WHERE c.id IN ${idsOf(contactIds)}`,
  )
  return new Map(rows.map((r) => [r.contactId, r]))
}

/**
 * Side effect: adds `tag` to the contacts lacking it and records a `tag` signal for each of them in the same
 * statement when a pipeline of the account listens for tags (tag-triggered pipelines start from it); the ids
 * of the contacts that got it.
 */
export async function addTag(
  ex: Executor,
  contactIds: readonly number[],
  tag: string,
  now: Date,
  chains: Record<string, number> = {},
) {
  const rows = await queryRows<{ id: number }>(
    ex,
    sql`WITH ${lockedInAddressOrder(contactIds)},
        u AS (
          UPDATE contacts SET tags = array_append(tags, ${tag}::text), updated_at = ${ts(now)}
          WHERE id IN (SELECT id FROM locked) AND NOT (${tag}::text = ANY(tags))
          RETURNING id, account_id, email),
        s AS (
          INSERT INTO signals (account_id, kind, email, payload, created_at)
          SELECT account_id, 'tag', email,
                 jsonb_build_object('tags', jsonb_build_array(${tag}::text), 'chain', ${signalChainSql(sql`u.id`, chains)}),
                 ${ts(now)}
          FROM u WHERE ${listenedFor(sql`u.account_id`, 'tag')} RETURNING 1)
        SELECT id FROM u`,
  )
  return rows.map((r) => r.id)
}

/** Side effect: removes `tag` from the contacts. */
export async function removeTag(ex: Executor, contactIds: readonly number[], tag: string, now: Date) {
  await ex.execute(
    sql`WITH ${lockedInAddressOrder(contactIds)}
        UPDATE contacts SET tags = array_remove(tags, ${tag}::text), updated_at = ${ts(now)}
        WHERE id IN (SELECT id FROM locked) AND ${tag}::text = ANY(tags)`,
  )
}

/**
 * Side effect: subscribes the contacts to `listId` of the account: new members join subscribed (or in their
 * suppressed state, 4/5), unconfirmed ones are confirmed; someone who unsubscribed, bounced or complained
 * stays as they are (an automation never overrides their choice). A `subscribe` signal is recorded for
 * each contact this made subscribed, when a pipeline of the account listens for subscribes. A list of another
 * account is ignored.
 */
export async function subscribeToList(
  ex: Executor,
  accountId: number,
  contactIds: readonly number[],
  listId: number,
  now: Date,
  chains: Record<string, number> = {},
): Promise<number> {
  const rows = await queryRows<{ contact_id: number }>(
    ex,
    sql`WITH l AS (SELECT id FROM lists WHERE id = ${listId} AND account_id = ${accountId}),
        ins AS (
          INSERT INTO memberships (account_id, list_id, contact_id, status, source, subscribed_at, updated_at)
          SELECT ${accountId}, l.id, c.id,
                 CASE c.suppressed WHEN 'hard_bounce' THEN 4 WHEN 'complaint' THEN 5 ELSE 1 END,
                 'automation', ${ts(now)}, ${ts(now)}
          FROM contacts c, l WHERE c.id IN ${idsOf(contactIds)}
          ON CONFLICT (list_id, contact_id) DO NOTHING
          RETURNING contact_id, status),
        upd AS (
          UPDATE memberships m SET status = 1, subscribed_at = ${ts(now)}, updated_at = ${ts(now)}
          FROM l WHERE m.list_id = l.id AND m.contact_id IN ${idsOf(contactIds)} AND m.status = 6
          RETURNING m.contact_id, m.status),
        joined AS (SELECT contact_id FROM ins WHERE status = 1 UNION ALL SELECT contact_id FROM upd),
        s AS (
          INSERT INTO signals (account_id, kind, email, payload, created_at)
          SELECT c.account_id, 'subscribe', c.email,
                 jsonb_build_object('list_id', ${listId}::int, 'chain', ${signalChainSql(sql`c.id`, chains)}), ${ts(now)}
          FROM joined j JOIN contacts c ON c.id = j.contact_id
          WHERE ${listenedFor(accountId, 'subscribe')} RETURNING 1)
        SELECT contact_id FROM joined`,
  )
  return rows.length
}

/** Side effect: unsubscribes the contacts from `listId` of the account (subscribed or unconfirmed ones). */
export async function unsubscribeFromList(
  ex: Executor,
  accountId: number,
  contactIds: readonly number[],
  listId: number,
  now: Date,
): Promise<void> {
  await ex.execute(
    sql`UPDATE memberships SET status = 2, unsubscribed_at = ${ts(now)}, updated_at = ${ts(now)}
        WHERE account_id = ${accountId} AND list_id = ${listId} AND contact_id IN ${idsOf(contactIds)}
          AND status IN (1, 6)`,
  )
}

/**
 * Subscriber columns an edit node may write (the contact columns conditions read, but the address, which is
 * the subscriber's identity); any other key is a custom field.
 */
const EDITABLE: ReadonlySet<string> = new Set([...CONTACT_FIELDS].filter((f) => f !== 'email'))
/** Contact columns that may hold null, read off the table; the rest hold '' for "none". */
const NULLABLE: ReadonlySet<string> = new Set(
  Object.values(getTableColumns(contacts))
    .filter((c) => !c.notNull)
    .map((c) => c.name),
)

/**
 * Side effect: writes the fields on the contacts: known columns overwritten, the rest merged into custom fields.
 * null clears a field: '' in a column that holds no null (a null there failed the node's whole group, every
 * time its claim ran out, with no run moving on).
 */
export async function editFields(
  ex: Executor,
  contactIds: readonly number[],
  fields: Record<string, unknown>,
  now: Date,
): Promise<void> {
  const columns = new Map<string, string | null>()
  const custom: Record<string, unknown> = {}
  // Names as a node saved today holds them (trimmed, lower case, as subscribe keeps custom fields): a node saved
  // before its fields were checked may say ` City ` or `Favourite`, which would miss the column or write a second
  // custom field beside `favourite`. Names that meet in lower case are one field, the last given standing (one
  // assignment per column: PostgreSQL refuses two).
  const named = (key: string) => key.trim().toLowerCase()
  for (const [rawKey, value] of Object.entries(fields)) {
    // Custom fields the node names under `custom_fields` (pipelines/node-properties.ts), beside those at the top.
    if (rawKey === 'custom_fields' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) custom[named(k)] = v
      continue
    }
    const key = named(rawKey)
    const text = value === null || value === undefined ? (NULLABLE.has(key) ? null : '') : String(value)
    if (EDITABLE.has(key)) columns.set(key, text)
    else custom[key] = value
  }
  const sets: SQL[] = [sql`updated_at = ${ts(now)}`]
  for (const [key, text] of columns) sets.push(sql`${sql.identifier(key)} = ${text}`)
  if (Object.keys(custom).length)
    sets.push(sql`custom_fields = custom_fields || ${JSON.stringify(custom)}::jsonb`)
  await ex.execute(
    sql`WITH ${lockedInAddressOrder(contactIds)}
        UPDATE contacts SET ${sql.join(sets, sql`, `)} WHERE id IN (SELECT id FROM locked)`,
  )
}

export interface PendingSignal {
  id: number
  accountId: number
  kind: string
  email: string
  payload: Record<string, unknown>
}

/** Row-locks up to `limit` unconsumed signals, oldest first, skipping those another consumer holds. */
export async function claimSignals(ex: Executor, limit: number): Promise<PendingSignal[]> {
  const rows = await queryRows<{
    id: string | number
    account_id: number
    kind: string
    email: string
    payload: Record<string, unknown> | string
  }>(
    ex,
    sql`SELECT id, account_id, kind, email, payload FROM signals
        ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
  )
  return rows.map((r) => ({
    id: Number(r.id),
    accountId: r.account_id,
    kind: r.kind,
    email: r.email,
    payload: typeof r.payload === 'string' ? (JSON.parse(r.payload) as Record<string, unknown>) : r.payload,
  }))
}

/** Side effect: deletes consumed signals (in the transaction that acted on them, so a crash repeats both). */
export async function deleteSignals(ex: Executor, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return
  await ex.execute(
    sql`DELETE FROM signals
        WHERE id IN (SELECT (jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))::bigint)`,
  )
}
