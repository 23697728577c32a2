import pg from 'pg'

/** A LISTEN held by this process until close(). */
export interface Listening {
  /** Side effect: stops listening and closes its connection. */
  close(): Promise<void>
}

/** Waits after a lost listening connection, doubled on each failed reopen up to the most. */
const REOPEN_FIRST_MS = 1_000
const REOPEN_MOST_MS = 30_000
/** A connection that cannot be opened, or a statement that does not answer, in this long is given up. */
const STATEMENT_MS = 10_000
const KEEPALIVE_MS = 20_000
/**
 * A listening connection runs a statement this often: a connection gone silent (a network cut that sent no
 * reset) otherwise goes unnoticed until the system's TCP keepalive gives up, minutes later, and meanwhile no
 * notification comes.
 */
const CHECK_EVERY_MS = 30_000
/** How pg_stat_activity names a listening connection. */
const APPLICATION_NAME = 'tidings listen'

/** CHECK_EVERY_MS and STATEMENT_MS for one listening (tests shorten them to see a silent connection found). */
export interface ListenTimings {
  checkEveryMs?: number
  statementMs?: number
}

/** Channel names are written into the statement (LISTEN takes no parameter): only plain identifiers. */
export function checkedChannel(channel: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`not a plain channel name: ${channel}`)
  return channel
}

/**
 * LISTEN on a connection of its own, outside the pool: a pooled client is lent to others and closed when idle.
 * A connection that is lost (a restart, a failover, a cut) is opened again, after a wait that grows to
 * REOPEN_MOST_MS, for as long as the listening lasts; `onNotify` is then called once, for whatever was sent
 * while it was away. Resolves after the first try, whether it succeeded or failed (the next tries run on their
 * own): a database that is away must not hold up the start of a worker, whose poll finds the work meanwhile.
 */
export async function listenOnOwnConnection(
  url: string,
  channel: string,
  onNotify: () => void,
  onLost: (err: unknown) => void,
  timings: ListenTimings = {},
): Promise<Listening> {
  const statement = `LISTEN ${checkedChannel(channel)}`
  const statementMs = timings.statementMs ?? STATEMENT_MS
  let closed = false
  let current: pg.Client | undefined
  let reopen: NodeJS.Timeout | undefined
  /** The current connection's periodic statement. */
  let check: NodeJS.Timeout | undefined
  let wait = REOPEN_FIRST_MS

  const open = async (missed: boolean) => {
    reopen = undefined
    const client = new pg.Client({
      connectionString: url,
      application_name: APPLICATION_NAME,
      connectionTimeoutMillis: statementMs,
      query_timeout: statementMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_MS,
    })
    current = client
    let dropped = false
    const drop = (err: unknown) => {
      if (dropped) return
      dropped = true
      clearInterval(check)
      client.end().catch(() => undefined)
      if (closed) return
      onLost(err)
      reopen = setTimeout(() => void open(true), wait)
      reopen.unref()
      wait = Math.min(wait * 2, REOPEN_MOST_MS)
    }
    // An idle connection that fails must not crash the process: it is opened again.
    client.on('error', drop)
    client.on('end', () => drop(new Error('the listening connection ended')))
    client.on('notification', (n) => {
      if (n.channel === channel) onNotify()
    })
    try {
      await client.connect()
      await client.query(statement)
    } catch (err) {
      drop(err)
      return
    }
    if (closed) {
      dropped = true
      await client.end().catch(() => undefined)
      return
    }
    wait = REOPEN_FIRST_MS
    check = setInterval(() => client.query('SELECT 1').catch(drop), timings.checkEveryMs ?? CHECK_EVERY_MS)
    check.unref()
    if (missed) onNotify()
  }

  await open(false)
  return {
    async close() {
      closed = true
      clearTimeout(reopen)
      clearInterval(check)
      // Bounded: the end of a connection gone silent waits for a reply that never comes.
      const ended = current?.end().catch(() => undefined)
      await Promise.race([ended, new Promise((r) => setTimeout(r, statementMs).unref())])
    },
  }
}

/**
 * A notifier that sends at most one notification every `gapMs`: the first call of a quiet spell at once, the calls
 * after it within the gap as one at its end. A busy intake so costs the database a few statements a second, not
 * one per call. A notification that fails is dropped: its listeners find the work on their next poll.
 */
export function coalescedNotifier(notify: () => Promise<void>, gapMs: number): () => void {
  let last = -Infinity
  let pending: NodeJS.Timeout | undefined
  const send = () => {
    pending = undefined
    last = Date.now()
    notify().catch(() => undefined)
  }
  return () => {
    if (pending) return
    const wait = last + gapMs - Date.now()
    if (wait <= 0) return send()
    pending = setTimeout(send, wait)
    // A process that is ending does not wait for it: its notification would only say what the poll finds.
    pending.unref()
  }
}
