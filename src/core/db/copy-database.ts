import type { DbHandle, Executor } from './client.js'
import { positionalSql, queryRows } from './sql.js'

/**
 * Copies an installation's data from one database to another of the same schema: how an installation that
 * started on the embedded database (PGlite) moves to PostgreSQL to grow to several processes (cli.ts,
 * `copy-to-postgres`). Every table of the `public` schema, row for row, and every sequence where it stood, so
 * ids go on where they were and links in mail already sent (signed with the installation's secrets, which are
 * rows too) keep working. pg-boss's schema is not copied: its only queue is the feed refresh, which the feeds'
 * own schedule sends again.
 */

const SCHEMA = 'public'

/** Rows written at a time, unless they come to PAGE_BYTES first: bounded memory, whatever the table's size. */
const PAGE_ROWS = 2_000
const PAGE_BYTES = 8 * 1024 * 1024
/** Rows read from the source's cursor at a time. */
const FETCH_ROWS = 200

/**
 * Rows a database has before anything was copied into it: the installation's secrets, made when a process
 * first started on it. The source's replace them: the mail already sent was signed with those.
 */
const REPLACED_TABLES = new Set(['instance_settings'])

/** The copy would mix two installations, or cannot be made; nothing was written. */
export class CopyRefusedError extends Error {
  // cli.ts tells it by name: it loads this file only for the command that copies.
  override name = 'CopyRefusedError'
}

export interface CopyReport {
  /** Rows copied by table, in the order the tables were copied. */
  tables: { name: string; rows: number }[]
  sequences: number
}

const rowsOf = <T>(ex: Executor, text: string, values: unknown[] = []) =>
  queryRows<T>(ex, positionalSql(text, values))

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`
/** A table or sequence of SCHEMA, quoted for a statement. */
const qualified = (name: string) => `${quoted(SCHEMA)}.${quoted(name)}`

/** Each table's columns in order (views have none to copy); both databases must have the same: the same migrations. */
async function columnsByTable(ex: Executor): Promise<Map<string, string[]>> {
  const rows = await rowsOf<{ table: string; columns: string[] }>(
    ex,
    `SELECT table_name AS table, array_agg(column_name::text ORDER BY ordinal_position) AS columns
       FROM information_schema.columns
      WHERE table_schema = $1 AND table_name IN (SELECT table_name FROM information_schema.tables
                                                  WHERE table_schema = $1 AND table_type = 'BASE TABLE')
      GROUP BY table_name`,
    [SCHEMA],
  )
  return new Map(rows.map((r) => [r.table, r.columns]))
}

/**
 * The tables in an order that inserts every row after the rows it refers to (foreign keys are checked at
 * each insert, not deferred). A table referring to itself would need its rows ordered too: none does, and
 * a cycle is refused rather than copied into a failure halfway.
 */
export function loadOrder(tables: string[], references: { child: string; parent: string }[]): string[] {
  const parents = new Map(tables.map((t) => [t, new Set<string>()]))
  for (const { child, parent } of references) if (child !== parent) parents.get(child)?.add(parent)
  const done = new Set<string>()
  const order: string[] = []
  // Each pass places at least one table, or the rest wait on each other.
  while (order.length < tables.length) {
    const ready = tables.filter((t) => !done.has(t) && [...parents.get(t)!].every((p) => done.has(p)))
    if (!ready.length) throw new CopyRefusedError('the tables refer to each other in a cycle')
    for (const t of ready) {
      done.add(t)
      order.push(t)
    }
  }
  return order
}

async function references(ex: Executor): Promise<{ child: string; parent: string }[]> {
  return rowsOf(
    ex,
    `SELECT c.relname AS child, p.relname AS parent
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
      WHERE k.contype = 'f' AND c.relnamespace = $1::regnamespace`,
    [SCHEMA],
  )
}

async function sequences(ex: Executor): Promise<{ name: string; last: string; called: boolean }[]> {
  const names = await rowsOf<{ name: string }>(
    ex,
    `SELECT sequence_name AS name FROM information_schema.sequences WHERE sequence_schema = $1
      ORDER BY sequence_name`,
    [SCHEMA],
  )
  const out = []
  for (const { name } of names) {
    const [row] = await rowsOf<{ last: string; called: boolean }>(
      ex,
      `SELECT last_value::text AS last, is_called AS called FROM ${qualified(name)}`,
    )
    out.push({ name, ...row! })
  }
  return out
}

/** Refuses what would mix two installations: a target with rows of its own, or of another schema. */
async function checkTarget(source: Executor, target: Executor): Promise<string[]> {
  const [from, to] = [await columnsByTable(source), await columnsByTable(target)]
  const tables = [...from.keys()].sort()
  for (const t of new Set([...tables, ...to.keys()]))
    if (from.get(t)?.join() !== to.get(t)?.join())
      throw new CopyRefusedError(`the databases' schemas differ at table ${t} (run migrations on both)`)
  // Until the copy commits, no process of the target's can write a row of its own in between the check below
  // and the copy (ids from the sequences set after it would then collide). Reading goes on.
  await rowsOf(target, `LOCK TABLE ${tables.map(qualified).join(', ')} IN EXCLUSIVE MODE`)
  for (const t of tables) {
    if (REPLACED_TABLES.has(t)) continue
    const [row] = await rowsOf<{ any: boolean }>(
      target,
      `SELECT EXISTS (SELECT 1 FROM ${qualified(t)}) AS any`,
    )
    if (row?.any) throw new CopyRefusedError(`the target database is not empty: table ${t} has rows`)
  }
  return tables
}

/** An array literal of the given elements: each quoted, so any text (a row's, with its own quotes) is one element. */
const arrayLiteral = (items: string[]) =>
  `{${items.map((i) => `"${i.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`

/**
 * One table's rows through a cursor, each in the row type's own text form (the form COPY and `row::text` use:
 * every column reads back exactly as written, a jsonb `null` not becoming SQL NULL as through JSON), written a
 * page at a time: at most PAGE_ROWS rows or PAGE_BYTES of them (a row can be a 4 MB message body).
 */
async function copyTable(source: Executor, target: Executor, table: string): Promise<number> {
  const name = qualified(table)
  await rowsOf(source, `DECLARE copy_rows NO SCROLL CURSOR FOR SELECT t::text AS r FROM ${name} t`)
  let page: string[] = []
  let bytes = 0
  let copied = 0
  const write = async () => {
    if (!page.length) return
    try {
      // The table's columns are the same on both sides, in the same order (checkTarget).
      await rowsOf(target, `INSERT INTO ${name} SELECT * FROM unnest($1::text::${name}[])`, [
        arrayLiteral(page),
      ])
    } catch (err) {
      // The driver's message carries the statement's parameters: the page's rows, secrets and key hashes among
      // them. The database's own reason names what failed without them.
      const reason =
        err instanceof Error && err.cause instanceof Error ? err.cause.message : 'the insert failed'
      throw new Error(`table ${table}: ${reason}`)
    }
    copied += page.length
    page = []
    bytes = 0
  }
  // Bounded by the table's rows: each fetch moves the cursor on, and an empty one ends it.
  for (;;) {
    const rows = await rowsOf<{ r: string }>(source, `FETCH ${FETCH_ROWS} FROM copy_rows`)
    if (!rows.length) break
    for (const { r } of rows) {
      page.push(r)
      bytes += r.length
    }
    if (page.length >= PAGE_ROWS || bytes >= PAGE_BYTES) await write()
  }
  await write()
  await rowsOf(source, 'CLOSE copy_rows')
  return copied
}

async function countRows(ex: Executor, table: string): Promise<number> {
  const [row] = await rowsOf<{ n: number }>(ex, `SELECT count(*)::int AS n FROM ${qualified(table)}`)
  return row!.n
}

/**
 * Copies every row and sequence of `source` into `target`, both migrated to `migrations` first. One
 * transaction on the target: a copy that fails or is refused leaves it as it was. The source is only read;
 * nothing may write to it meanwhile (the embedded database's lock keeps the service out).
 */
export async function copyDatabase(
  source: DbHandle,
  target: DbHandle,
  migrations: string,
): Promise<CopyReport> {
  await source.migrate(migrations)
  await target.migrate(migrations)
  return target.db.transaction((to) =>
    source.db.transaction(async (from) => {
      const tables = await checkTarget(from, to)
      const order = loadOrder(tables, await references(from))
      const report: CopyReport = { tables: [], sequences: 0 }
      for (const t of order) {
        if (REPLACED_TABLES.has(t)) await rowsOf(to, `DELETE FROM ${qualified(t)}`)
        const rows = await copyTable(from, to, t)
        // Counted again in the target's transaction: a row lost on the way fails the copy, not the installation.
        // (The source needs no count: its cursor read the table whole, in this transaction's snapshot.)
        const there = await countRows(to, t)
        if (there !== rows) throw new Error(`table ${t}: ${rows} rows copied, ${there} in the target`)
        report.tables.push({ name: t, rows })
      }
      for (const s of await sequences(from)) {
        await rowsOf(to, 'SELECT setval($1::regclass, $2::bigint, $3::boolean)', [
          qualified(s.name),
          s.last,
          s.called,
        ])
        report.sequences++
      }
      return report
    }),
  )
}
