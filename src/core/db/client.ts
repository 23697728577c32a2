import fs from 'node:fs'
import path from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres'
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core'
import type { ExtractTablesWithRelations } from 'drizzle-orm'
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator'
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator'
import { acquireDataDirLock, type DataDirLock } from './lock.js'
import { checkedChannel, listenOnOwnConnection, type Listening } from './notifications.js'
import { retryOnConflict } from './retry.js'

/** Serialises concurrent start-ups on one PostgreSQL (several API and worker processes). */
const MIGRATION_LOCK_ID = 7_200_341

type Schema = Record<string, never>
export type Db = PgDatabase<PgQueryResultHKT, Schema>
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>
/** Anything a repo can run queries on: the database or an open transaction. */
export type Executor = Db | Tx

export interface SqlResult {
  rows: Record<string, unknown>[]
}

export interface DbHandle {
  kind: 'pglite' | 'postgres'
  db: Db
  /** Raw SQL for pg-boss and migrations: parameterless text may hold several statements. */
  executeSql(text: string, values?: unknown[]): Promise<SqlResult>
  /**
   * A hot statement under a fixed name: PostgreSQL prepares it once per connection and skips parse and plan
   * afterwards (unless opened with `preparedStatements: false`: then it runs unnamed); PGlite runs it as a plain
   * query.
   */
  prepared(name: string, text: string, values: unknown[]): Promise<SqlResult>
  /** Applies the committed SQL migrations in `folder`; safe to call from many processes at once. */
  migrate(folder: string): Promise<void>
  /**
   * Runs `fn` holding the lock migrate takes (PostgreSQL; one process at a time anyway on PGlite): for other
   * schema set-up at start (pg-boss's), whose own guard lets processes starting together fail each other.
   */
  underMigrationLock<T>(fn: () => Promise<T>): Promise<T>
  /**
   * Takes the session advisory lock (`space`, `key`) if free, on a connection of its own that holds it for as
   * long as this process lives (PGlite: its one connection). 'taken' when another session holds it; 'pooled'
   * when PostgreSQL is reached through a pooler (`preparedStatements: false`, or a server session whose client
   * port is not this connection's), where a session may outlive its client or end under a living one.
   */
  sessionLock(space: number, key: number): Promise<SessionLock | 'taken' | 'pooled'>
  /** Sends a notification on `channel`, outside any transaction: every process listening on it hears it. */
  notify(channel: string): Promise<void>
  /**
   * Calls `onNotify` for each notification on `channel` until close(); a lost connection is opened again and
   * `onNotify` called once for what it missed (`onLost` hears of each loss). A hint, never the only road: on
   * PostgreSQL reached through a pooler (`preparedStatements: false`) nothing is heard, since a LISTEN there stays
   * with a server session the pooler lends to other clients.
   */
  listen(channel: string, onNotify: () => void, onLost: (err: unknown) => void): Promise<Listening>
  close(): Promise<void>
}

/** A session advisory lock held by this process, as long as `lost` is false. */
export interface SessionLock {
  /** True once the connection holding it has gone (its server ended it, the network failed): the lock is free. */
  readonly lost: boolean
  /** True when it was lost because a pooler turned out to pass its statements to other sessions. */
  readonly pooled: boolean
  /** Settles when the lock is lost or released. */
  readonly closed: Promise<void>
  /** Side effect: frees the lock and closes its connection. */
  release(): Promise<void>
}

export interface OpenOptions {
  databaseUrl?: string | undefined
  /** Directory for the embedded database; undefined with no databaseUrl means in-memory (tests). */
  dataDir?: string | undefined
  poolSize?: number
  /** PostgreSQL: `prepared` statements run named (default) or unnamed, for a pooler that cannot carry them. */
  preparedStatements?: boolean
  /** Ready-made PGlite (tests clone a migrated template into one). */
  pglite?: PGlite
}

/** Where under DATA_DIR the embedded database keeps its files. */
export const embeddedDatabaseDir = (dataDir: string) => path.join(dataDir, 'pgdata')

export async function openDatabase(opts: OpenOptions): Promise<DbHandle> {
  if (opts.databaseUrl)
    return openPostgres(opts.databaseUrl, opts.poolSize ?? 10, opts.preparedStatements ?? true)
  let lock: DataDirLock | undefined
  let client = opts.pglite
  if (!client) {
    if (opts.dataDir) {
      const dir = embeddedDatabaseDir(opts.dataDir)
      fs.mkdirSync(opts.dataDir, { recursive: true })
      lock = acquireDataDirLock(opts.dataDir)
      try {
        client = await PGlite.create(dir)
      } catch (err) {
        lock.release()
        throw err
      }
    } else {
      client = await PGlite.create()
    }
  }
  return wrapPglite(client, lock)
}

export function wrapPglite(client: PGlite, lock?: DataDirLock): DbHandle {
  const db = drizzlePglite(client) as unknown as Db
  return {
    kind: 'pglite',
    db,
    async executeSql(text, values) {
      if (!values || values.length === 0) {
        const results = await client.exec(text)
        return { rows: (results[results.length - 1]?.rows ?? []) as Record<string, unknown>[] }
      }
      const r = await client.query<Record<string, unknown>>(text, values)
      return { rows: r.rows }
    },
    async prepared(_name, text, values) {
      const r = await client.query<Record<string, unknown>>(text, values)
      return { rows: r.rows }
    },
    underMigrationLock: (fn) => fn(),
    async migrate(folder) {
      await migratePglite(drizzlePglite(client), { migrationsFolder: folder })
    },
    async sessionLock(space, key) {
      // One session for every taker in the process: PostgreSQL would grant it the same lock again, so one held is
      // taken.
      const r = await client.query<{ ok: boolean }>(
        `SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::int::oid
                                    AND objid = $2::int::oid AND objsubid = 2)
                THEN false ELSE pg_try_advisory_lock($1, $2) END AS ok`,
        [space, key],
      )
      if (!r.rows[0]?.ok) return 'taken'
      // The one connection lives as long as the database is open: the lock is lost only with the process.
      let released: () => void = () => undefined
      return {
        lost: false,
        pooled: false,
        closed: new Promise<void>((resolve) => (released = resolve)),
        release: async () => {
          if (!client.closed) await client.query('SELECT pg_advisory_unlock($1, $2)', [space, key])
          released()
        },
      }
    },
    async notify(channel) {
      await client.query('SELECT pg_notify($1, NULL)', [checkedChannel(channel)])
    },
    async listen(channel, onNotify) {
      // One session in one process: it cannot be lost while the database is open.
      const unlisten = await client.listen(checkedChannel(channel), () => onNotify())
      return { close: () => (client.closed ? Promise.resolve() : unlisten()) }
    },
    async close() {
      await client.close()
      lock?.release()
    },
  }
}

function openPostgres(url: string, max: number, named: boolean): DbHandle {
  const pool = new pg.Pool({ connectionString: url, max })
  /** Runs fn holding the migration lock, a session lock of one connection of the pool (fn may use others). */
  const locked = async <T>(fn: (conn: pg.PoolClient) => Promise<T>): Promise<T> => {
    const conn = await pool.connect()
    try {
      await conn.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID])
      return await fn(conn)
    } finally {
      await conn.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined)
      conn.release()
    }
  }
  // An idle client that loses its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined)
  // Nor one checked out: the pool takes its own listener off a client while it is lent (a transaction between
  // two statements), so a server that ends the session then (a restart, a failover, pg_terminate_backend) made
  // pg's Client emit an 'error' no one heard, and the worker died. The transaction's next statement fails
  // instead, and the pool drops the client when it comes back (no longer queryable).
  pool.on('connect', (client) => client.on('error', () => undefined))
  const sessionLocks = new Set<SessionLock>()
  const listenings = new Set<Listening>()
  let closing = false
  const plainQuery = retryConflictsOutsideTransactions(pool)
  const db = drizzlePg(pool) as unknown as Db
  return {
    kind: 'postgres',
    db,
    async executeSql(text, values) {
      // Not retried: the text may hold several statements, some of them committing on their own (migrations).
      const r = await plainQuery(text, values)
      const last = Array.isArray(r) ? r[r.length - 1] : r
      return { rows: (last?.rows ?? []) as Record<string, unknown>[] }
    },
    async prepared(name, text, values) {
      const r = await pool.query(named ? { name, text, values } : { text, values })
      return { rows: r.rows as Record<string, unknown>[] }
    },
    migrate: (folder) => locked((conn) => migratePg(drizzlePg(conn), { migrationsFolder: folder })),
    underMigrationLock: (fn) => locked(fn),
    async sessionLock(space, key) {
      if (!named) return 'pooled'
      if (closing) throw new Error('the database is closed')
      const lock = await holdSessionLock(url, space, key)
      if (typeof lock === 'object') {
        sessionLocks.add(lock)
        lock.closed.finally(() => sessionLocks.delete(lock)).catch(() => undefined)
      }
      return lock
    },
    async notify(channel) {
      await pool.query('SELECT pg_notify($1, NULL)', [checkedChannel(channel)])
    },
    async listen(channel, onNotify, onLost) {
      if (!named) return { close: () => Promise.resolve() }
      if (closing) throw new Error('the database is closed')
      const listening = await listenOnOwnConnection(url, channel, onNotify, onLost)
      listenings.add(listening)
      return {
        close: async () => {
          listenings.delete(listening)
          await listening.close()
        },
      }
    },
    async close() {
      closing = true
      await Promise.all([...sessionLocks].map((l) => l.release()))
      await Promise.all([...listenings].map((l) => l.close()))
      await pool.end()
    },
  }
}

const SESSION_LOCK_KEEPALIVE_MS = 20_000
/**
 * A lock's connection that cannot be opened, or a statement of it that does not answer, in this long is given up
 * (the caller claims by the lease).
 */
const SESSION_LOCK_CONNECT_MS = 10_000

/**
 * A session lock on a client outside the pool: a pooled client goes back to the pool and is closed when idle,
 * and with it the lock. The server session must see this very connection as its client: a pooler in between
 * (PgBouncer in transaction mode) keeps the lock on a server connection of its own, held after this process dies
 * and dropped when the pooler recycles it while this process lives. So over TCP its client port must be this
 * socket's, and a Unix socket must meet a Unix socket; the keepalive then checks that its statements still reach
 * the session that took the lock (a pooler reached and reaching the server by Unix sockets is told only so, or
 * by SEND_CLAIM_LOCKS=0: README).
 */
async function holdSessionLock(
  url: string,
  space: number,
  key: number,
): Promise<SessionLock | 'taken' | 'pooled'> {
  const client = new pg.Client({
    connectionString: url,
    // How pg_stat_activity names it, apart from the pool's connections.
    application_name: 'tidings lock',
    connectionTimeoutMillis: SESSION_LOCK_CONNECT_MS,
    // Its few statements are tiny: one that does not answer means a connection gone quiet, not a busy server.
    query_timeout: SESSION_LOCK_CONNECT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: SESSION_LOCK_KEEPALIVE_MS,
  })
  let lost = false
  let pooled = false
  let ended: () => void = () => undefined
  const closed = new Promise<void>((resolve) => (ended = resolve))
  /** The lock is gone (or no longer to be trusted): its connection is closed, so it is freed if still held. */
  const gone = () => {
    if (lost) return
    lost = true
    client.end().catch(() => undefined)
    ended()
  }
  // A connection that fails while idle must not crash the process: the lock is simply gone.
  client.on('error', gone)
  client.on('end', gone)
  try {
    await client.connect()
    const local = (client.connection.stream as { localPort?: number }).localPort
    const [seen] = (
      await client.query<{ port: number | null; pid: number }>(
        'SELECT inet_client_port() AS port, pg_backend_pid() AS pid',
      )
    ).rows
    const port = seen?.port ?? undefined
    if (port !== local) {
      gone()
      return 'pooled'
    }
    const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [space, key])
    if (r.rows[0]?.ok) {
      // A server with idle_session_timeout would end an idle session, and its lock with it, under a living
      // process: a statement now and then keeps it busy, finds a dead connection sooner, and finds a pooler
      // that passes statements to other sessions.
      const keepAlive = setInterval(() => {
        client
          .query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
          .then((k) => {
            if (k.rows[0]?.pid === seen?.pid) return
            pooled = true
            gone()
          })
          .catch(gone)
      }, SESSION_LOCK_KEEPALIVE_MS)
      keepAlive.unref()
      void closed.then(() => clearInterval(keepAlive))
      return {
        get lost() {
          return lost
        },
        get pooled() {
          return pooled
        },
        closed,
        release: async () => {
          if (!lost) await client.end().catch(() => undefined)
          gone()
        },
      }
    }
  } catch (err) {
    gone()
    throw err
  }
  gone()
  return 'taken'
}

type PlainQuery = (text: string, values?: unknown[]) => Promise<pg.QueryResult | pg.QueryResult[]>

/**
 * Makes `pool.query`, which runs a statement outside any transaction (drizzle's transactions take a client of
 * their own with `pool.connect`), run it again when PostgreSQL aborted it to break a deadlock or for a
 * serialization failure (retry.ts). Such a statement wrote nothing, so running it again is what its caller
 * would do: concurrent writers of the same rows in another order (a list deleted while members join it, two
 * bulk writes of overlapping contacts) otherwise lost one request to a 500, and every repo would have to
 * remember the retry. A transaction is not retried here: only its caller knows whether its work may run again
 * (`retriedTransaction`). Returns the pool's own `query`, for text that must not be run twice.
 */
function retryConflictsOutsideTransactions(pool: pg.Pool): PlainQuery {
  const plain = pool.query.bind(pool) as (...args: unknown[]) => Promise<pg.QueryResult>
  const retrying = (...args: unknown[]) =>
    // pg's callback form (a function among the arguments) is not used here; it is passed on untouched.
    args.some((a) => typeof a === 'function') ? plain(...args) : retryOnConflict(() => plain(...args))
  // pg.Pool's query has many overloads; this one function serves them all as the original did.
  pool.query = retrying as unknown as typeof pool.query
  return plain as PlainQuery
}
