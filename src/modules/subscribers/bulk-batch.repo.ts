import { sql, type SQL } from 'drizzle-orm'
import { listenedFor } from '../signals/index.js'
import { TEXT_FIELDS, type ContactFields } from './subscriber-fields.validation.js'

/**
 * SQL pieces shared by the set-based bulk statements (subscribe-bulk.repo.ts, bulk-update.repo.ts). The whole
 * batch travels as one JSON parameter read by jsonb_to_recordset, so 3000 entries cost a few statements,
 * never one per entry (design.md: 3,000 updates ≤ 300 ms, imports ≥ 10,000 rows/s). A field that is null in
 * the recordset was not given and keeps its stored value.
 */

export interface BulkEntry {
  email: string
  fields: ContactFields
  status: number | undefined
  source: string | undefined
  /** Keyed hash of the address (erased-suppressions.ts), given where a statement creates contacts. */
  addressHash?: string
}

const TEXT_COLUMNS = Object.keys(TEXT_FIELDS)
/** Columns of the contacts table that may be NULL; the other text columns default to ''. */
const NULLABLE_TEXT = new Set(['company', 'phone', 'birthday', 'nameday'])

// Identifiers below come from TEXT_FIELDS (fixed at compile time), never from input.
const RECORD_COLUMNS: [name: string, type: string][] = [
  ['email', 'text'],
  ...TEXT_COLUMNS.map((c): [string, string] => [c, 'text']),
  ['rating', 'real'],
  ['tags', 'text[]'],
  ['groups', 'jsonb'],
  ['custom_fields', 'jsonb'],
  ['status', 'int'],
  ['source', 'text'],
  ['address_hash', 'text'],
]
const RECORD_DEFS = sql.raw(RECORD_COLUMNS.map(([name, type]) => `${name} ${type}`).join(', '))
const RECORD_NAMES = sql.raw(RECORD_COLUMNS.map(([name]) => name).join(', '))

/** The batch as the one jsonb parameter; keys match RECORD_DEFS. */
function batchJson(entries: BulkEntry[]): string {
  return JSON.stringify(
    entries.map((e) => {
      const { customFields, ...rest } = e.fields
      return {
        email: e.email,
        ...rest,
        custom_fields: customFields,
        status: e.status,
        source: e.source,
        address_hash: e.addressHash,
      }
    }),
  )
}

/** The entries without their contact fields: statements about memberships need only address, status, source. */
export function membershipOnly(entries: BulkEntry[]): BulkEntry[] {
  return entries.map((e) => ({ email: e.email, fields: {}, status: e.status, source: e.source }))
}

export const ts = (d: Date) => sql`${d.toISOString()}::timestamptz`

/**
 * The batch, each entry with its contact in the account (its id, suppression and tags before the statement:
 * `old_tags`, which tagSignals compares with) and that contact's membership of `listId` (NULL columns where
 * there is none). The LATERAL … LIMIT 1 subqueries cannot be flattened into joins, so every
 * entry is one unique-index probe whatever the planner believes about the tables: with plain joins, a
 * stale estimate (the recordset always looks like 100 rows) once chose a nested loop comparing every entry
 * with every contact, 60× slower.
 *
 * In the order of the entries (`entry_no`), by a sort, which is also what makes every probe run before the
 * statement writes a row: a sort reads all its input first (`+ 0`: by the column itself, the planner knows
 * the scan yields that order already and sorts nothing). Without it, a statement that writes contacts pulls the
 * batch one row at a time, so each probe walked the index entries of the rows written before it (invisible
 * to it, but there). With the unique index that costs nothing, but on a new database, with no statistics,
 * the planner took any index that starts with `account_id` for the probe (the phone index, seen), and in one
 * account all of this batch's new rows sit under one key of it: a first import of 3,000 cost 0.85 s where
 * the next took 0.2 (quadratic in the batch).
 *
 * `lockContacts`, for a statement that updates the contacts it finds: each probe locks its contact, so they are
 * locked in the order of the entries (the caller gives them in address order, inLockOrder) and two concurrent
 * imports of overlapping addresses wait for one another instead of deadlocking. The update's own join does not
 * keep that order: on a table of a few hundred contacts PostgreSQL hashes the batch and reads the table in its
 * own order (seen: three 500s in a race of 4,000 requests, each a deadlock four times in a row). A contact that
 * a concurrent writer changed is found as it committed. `'share'` (FOR KEY SHARE), for a statement that only
 * adds memberships to the contacts it finds: an erasure cannot delete one between this probe and the
 * membership's insert (which failed its foreign key, the whole import a 404), yet imports do not wait for
 * each other.
 */
export function batchWithMembers(
  entries: BulkEntry[],
  accountId: number,
  listId: number,
  opts: { lockContacts?: 'update' | 'share' } = {},
): SQL {
  const lock = opts.lockContacts
    ? sql.raw(opts.lockContacts === 'update' ? ' FOR NO KEY UPDATE' : ' FOR KEY SHARE')
    : sql``
  return sql`SELECT r.*, hit.contact_id, hit.suppressed, hit.old_tags, mem.membership_id, mem.was
    FROM ROWS FROM (jsonb_to_recordset(${batchJson(entries)}::jsonb) AS (${RECORD_DEFS}))
         WITH ORDINALITY AS r(${RECORD_NAMES}, entry_no)
    LEFT JOIN LATERAL (
      SELECT c.id AS contact_id, c.suppressed, c.tags AS old_tags FROM contacts c
      WHERE c.account_id = ${accountId} AND c.email = r.email LIMIT 1${lock}) hit ON true
    LEFT JOIN LATERAL (
      SELECT m.id AS membership_id, m.status AS was FROM memberships m
      WHERE m.list_id = ${listId} AND m.contact_id = hit.contact_id LIMIT 1) mem ON true
    ORDER BY r.entry_no + 0`
}

/** `col = coalesce(b.col, c.col)` for every plain field of contacts `c` from batch row `b`; custom fields and groups merged key by key. */
export function keepUnlessGiven(): SQL {
  return sql.raw(
    [
      ...TEXT_COLUMNS.map((col) => `${col} = coalesce(b.${col}, c.${col})`),
      'rating = coalesce(b.rating, c.rating)',
      `groups = c.groups || coalesce(b.groups, '{}'::jsonb)`,
      `custom_fields = c.custom_fields || coalesce(b.custom_fields, '{}'::jsonb)`,
    ].join(',\n'),
  )
}

/** Column list and values of a new contact from batch row `b`. */
export const insertColumns = sql.raw(TEXT_COLUMNS.join(', '))
export const insertValues = sql.raw(
  TEXT_COLUMNS.map((c) => (NULLABLE_TEXT.has(c) ? `b.${c}` : `coalesce(b.${c}, '')`)).join(', '),
)

/**
 * A CTE for a statement over the batch `b` (batchWithMembers) that writes tags: `tag_signals` records a `tag`
 * signal (the automations' outbox) naming the tags each entry matching `which` adds, when it adds any and an
 * automation of the account listens for tags. It compares with `b.old_tags`, the contact's tags as the batch
 * found them: every part of one statement sees one snapshot, so a CTE beside it that rewrites them does not
 * change what this one reads. (It used to look each contact up again by a probe of its own, which found the
 * same row; on PGlite's planner, as `IN (SELECT contact_id FROM b)`, that once became a semi join reading the
 * whole batch for every entry.)
 */
export function tagSignals(accountId: number, which: SQL, now: Date): SQL {
  return sql`tag_signals AS (
          INSERT INTO signals (account_id, kind, email, payload, created_at)
          SELECT ${accountId}, 'tag', x.email, jsonb_build_object('tags', to_jsonb(x.added)), ${ts(now)}
          FROM (SELECT b.email,
                       ARRAY(SELECT DISTINCT t FROM unnest(b.tags) t
                             WHERE b.old_tags IS NULL OR NOT (t = ANY(b.old_tags))) AS added
                FROM b
                WHERE b.tags IS NOT NULL AND (${which})) x
          WHERE cardinality(x.added) > 0 AND ${listenedFor(accountId, 'tag')}
          RETURNING 1)`
}
