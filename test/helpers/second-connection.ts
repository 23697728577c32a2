import pg from 'pg'
import { testDbKind } from './databases.js'

/** Why a test that needs a concurrent transaction is skipped on PGlite, or false on PostgreSQL. */
export const needsSecondConnection =
  testDbKind() === 'postgres'
    ? false
    : 'PostgreSQL only: the embedded database runs one transaction at a time'

export interface SecondConnection {
  /** A connection of its own to the test database, for a transaction beside the app's. */
  other: pg.Client
  /** Resolves once a statement of the test database waits for a lock (bounded: 200 × 25 ms, then throws). */
  untilLockWait(): Promise<void>
}

/** Runs `body` with a second connection to the test database (PostgreSQL), closed afterwards. */
export async function withSecondConnection(
  t: { db: { url: string | undefined } },
  body: (c: SecondConnection) => Promise<void>,
) {
  const other = new pg.Client({ connectionString: t.db.url })
  const watcher = new pg.Client({ connectionString: t.db.url })
  await other.connect()
  await watcher.connect()
  // The deadlock tests make the app's statement wait first and this connection second, and expect PostgreSQL to
  // abort the app's side (which must then run again): the waiter whose deadlock_timeout runs out first finds the
  // cycle and is aborted. With a few milliseconds between the two waits, a loaded machine could run this side's
  // check first (seen once in CI). Here it runs only after a minute, so the app's side is always the one found.
  // Setting it needs a superuser (as the tests' server has); where refused, the timing alone decides, as before.
  await other.query(`SET deadlock_timeout = '60s'`).catch(() => undefined)
  const untilLockWait = async () => {
    for (let i = 0; i < 200; i++) {
      const w = await watcher.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      )
      if (w.rowCount) return
      await new Promise((r) => setTimeout(r, 25))
    }
    throw new Error('no statement waited for a lock')
  }
  try {
    await body({ other, untilLockWait })
  } finally {
    await other.end()
    await watcher.end()
  }
}
