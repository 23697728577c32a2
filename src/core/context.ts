import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pino, { type Logger } from 'pino'
import type { Config } from './config.js'
import { systemClock, type Clock } from './clock.js'
import { openDatabase, type Db, type DbHandle } from './db/client.js'
import { loadOnFirstUse } from './load-on-first-use.js'
import { loadInstanceSecret } from './db/instance.js'
import { createJobQueue, type JobQueue } from './jobs/queue.js'
import { logRoundFailure } from './round-failure.js'
import type { Mailer } from './mail/mailer.js'
import { createSmtpMailer } from './mail/smtp.js'
import { createOutboxMailer } from './mail/outbox.js'

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url))

/** Everything a module needs, built once per process from the parsed configuration. */
export interface AppContext {
  config: Config
  log: Logger
  clock: Clock
  dbHandle: DbHandle
  db: Db
  jobs: JobQueue
  mailer: Mailer
  /** Signs links in mail; shared by every process through the database. */
  linkSecret: string
  /**
   * Keys the hashes that remember erased suppressed addresses. Apart from linkSecret so that replacing the
   * link-signing secret never forgets who must not be mailed.
   */
  erasureSecret: string
  /** Registers something to stop at shutdown (listeners, loops), before jobs, mailer and database close. */
  onClose(fn: () => Promise<void>): void
  close(): Promise<void>
}

export interface ContextOverrides {
  clock?: Clock
  dbHandle?: DbHandle
  mailer?: Mailer
  log?: Logger
}

// Loaded for a terminal only: the log of a service or a test is none.
const pinoPretty = loadOnFirstUse<typeof import('pino-pretty')>('pino-pretty')

/**
 * JSON lines (for log collectors) unless a person is watching: on a terminal the lines are pretty-printed.
 * pino-pretty runs as a plain stream on this thread, not as a pino transport: a transport is a worker that
 * loads its target by name, which a process run through tsx would have to resolve again.
 */
export function createLogger(
  config: Config,
  out: { tty?: boolean; destination?: NodeJS.WritableStream } = {},
): Logger {
  const options = {
    level: config.logLevel,
    // Keys and secrets never reach the logs, whatever a future log line includes.
    redact: ['req.headers.key', 'req.headers.authorization', 'headers.key', 'api_key', 'apiKey', 'secret'],
  }
  const destination = out.destination ?? process.stdout
  if (!(out.tty ?? process.stdout.isTTY === true)) return pino(options, destination)
  const prettyStream = pinoPretty()({
    destination,
    colorize: out.destination === undefined,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
  })
  return pino(options, prettyStream)
}

export async function createContext(config: Config, overrides: ContextOverrides = {}): Promise<AppContext> {
  const log = overrides.log ?? createLogger(config)
  const dbHandle =
    overrides.dbHandle ??
    (await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: config.dbPoolSize,
      preparedStatements: config.dbPreparedStatements,
    }))
  try {
    await dbHandle.migrate(MIGRATIONS_DIR)
    const linkSecret = await loadInstanceSecret(dbHandle.db)
    const erasureSecret = await loadInstanceSecret(dbHandle.db, 'erasure_secret')
    const mailer =
      overrides.mailer ??
      (config.smtpUrl
        ? createSmtpMailer({ url: config.smtpUrl, maxConnections: config.smtpConnections })
        : createOutboxMailer(path.join(config.dataDir, 'outbox')))
    const jobs = createJobQueue(dbHandle, (err) => logRoundFailure(log, err, 'job queue error'))
    const closers: (() => Promise<void>)[] = []
    return {
      config,
      log,
      clock: overrides.clock ?? systemClock,
      dbHandle,
      db: dbHandle.db,
      jobs,
      mailer,
      linkSecret,
      erasureSecret,
      onClose(fn) {
        closers.push(fn)
      },
      async close() {
        for (const fn of closers.splice(0).reverse())
          await fn().catch((err: unknown) => log.error({ err }, 'closing'))
        await jobs.stop().catch((err: unknown) => log.error({ err }, 'stopping jobs'))
        await mailer.close().catch(() => undefined)
        await dbHandle.close()
      },
    }
  } catch (err) {
    await dbHandle.close().catch(() => undefined)
    throw err
  }
}
