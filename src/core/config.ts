import dns from 'node:dns'
import path from 'node:path'

export type Role = 'all' | 'api' | 'worker'

export interface Config {
  port: number
  host: string
  role: Role
  dataDir: string
  databaseUrl: string | undefined
  dbPoolSize: number
  /**
   * Hot statements run as named prepared statements (parsed and planned once per connection). Off for a pooler
   * in front of PostgreSQL that cannot carry them from one transaction to the next (PgBouncer in transaction
   * mode before 1.21): they then run unnamed, parsed and planned each time.
   */
  dbPreparedStatements: boolean
  smtpUrl: string | undefined
  publicUrl: string
  /** PUBLIC_URL was set; otherwise publicUrl is this process's own localhost address (server.ts warns). */
  publicUrlGiven: boolean
  mailFrom: string
  bounceSmtpPort: number | undefined
  dnsServers: string[]
  allowPrivateNetwork: boolean
  bootstrapApiKey: string | undefined
  adminKey: string | undefined
  rateLimitPerMinute: number
  /** Requests with a missing or unknown API key per client address and minute before 429 (0: no limit). */
  authFailuresPerMinute: number
  bodyLimitBytes: number
  logLevel: string
  /** Threads that compose and DKIM-sign campaign mail (0: on the main thread). */
  sendThreads: number
  /** How long a sender's claim on ledger rows lasts; rows of a crashed sender are sent again after it. */
  sendLeaseSeconds: number
  /** Senders mark themselves alive with a session lock, so a dead one's claimed mail need not wait the lease. */
  sendClaimLocks: boolean
  /**
   * Mail with a body row (transactional, confirmation, automation) that the relay itself has failed (down,
   * login refused) is tried every minute; once it was queued this many hours ago, the next failure gives it up
   * (refused, no bounce). 0: tried until the relay takes it.
   */
  relayGiveUpHours: number
  /** Concurrent connections to the SMTP relay. */
  smtpConnections: number
  /** Largest product feed download; a bigger one fails the refresh and keeps the previous products. */
  feedMaxBytes: number
  /** Time for a whole feed download (connect, answer, parse); seconds, fractions allowed in tests. */
  feedTimeoutSeconds: number
  /**
   * How long a refresh request waits for the refresh's outcome before answering that it is still running, so
   * an over-limit or unreadable feed is answered 422 (contract §8); 0: answer at once. Seconds, fractions in tests.
   */
  feedRefreshWaitSeconds: number
  /**
   * Every feed is downloaded by the worker when it is created and again this many hours after its last download
   * started, whatever the account's plan (the plan and the hourly limit are the refresh request's); 0: only on
   * request.
   */
  feedAutoRefreshHours: number
  /**
   * api.md Limits: a feed of this many items or more cannot be refreshed. Not an environment setting (the
   * limit is the contract's); tests lower it to stay lean.
   */
  feedItemLimit: number
  /** Where automation sms nodes POST their messages (unset: sms nodes are logged as skipped). */
  smsGatewayUrl: string | undefined
  /** How long a worker's claim on due automation runs lasts; a crashed worker's runs are taken up after it. */
  automationLeaseSeconds: number
}

export class ConfigError extends Error {}

/**
 * Outbox mode: without SMTP_URL mail is only written to DATA_DIR/outbox and nothing leaves the machine, so
 * (contract §2 "Trying it locally") a sender domain need not be verified.
 */
export function writesToOutbox(config: Pick<Config, 'smtpUrl'>): boolean {
  return config.smtpUrl === undefined
}

type Env = Record<string, string | undefined>

function int(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min)
    throw new ConfigError(`${name} must be an integer ≥ ${min}, got "${raw}"`)
  if (n > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`)
  return n
}

const MAX_PORT = 65_535

function optionalPort(env: Env, name: string): number | undefined {
  return env[name] ? int(env, name, 0, 1, MAX_PORT) : undefined
}

/** pino's levels: another word made the logger throw at start, with its stack. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/** Resolvers as dns.setServers takes them (`1.1.1.1`, `[::1]:53`): checked here, before anything starts. */
function dnsServers(env: Env): string[] {
  const servers = (nonEmpty(env, 'DNS_SERVERS') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  try {
    new dns.Resolver().setServers(servers)
  } catch {
    throw new ConfigError(`DNS_SERVERS must be IP addresses (with :port if not 53), got "${env.DNS_SERVERS}"`)
  }
  return servers
}

const ON = ['1', 'true', 'yes', 'on']
const OFF = ['0', 'false', 'no', 'off']

/**
 * A switch: unset or empty gives `fallback`, an "on" or "off" word turns it on or off, and anything else stops
 * start-up naming the variable: a typo (`=fasle`, `=ture`) would otherwise leave the switch as it was, silently.
 */
function flag(env: Env, name: string, fallback = false): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase()
  if (raw === '') return fallback
  if (ON.includes(raw)) return true
  if (OFF.includes(raw)) return false
  throw new ConfigError(`${name} must be one of ${[...ON, ...OFF].join(', ')}, got "${env[name]}"`)
}

function nonEmpty(env: Env, name: string): string | undefined {
  const v = env[name]?.trim()
  return v ? v : undefined
}

/** A PostgreSQL connection URL, as DATABASE_URL and the copy command's target take. */
export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//.test(url)

/** Parses the environment once; every other module reads the returned object, never process.env. */
export function loadConfig(env: Env = process.env): Config {
  // 0: any free port (the tests' servers).
  const port = int(env, 'PORT', 3000, 0, MAX_PORT)
  const role = (nonEmpty(env, 'ROLE') ?? 'all') as Role
  if (!['all', 'api', 'worker'].includes(role))
    throw new ConfigError(`ROLE must be all, api or worker, got "${role}"`)
  const databaseUrl = nonEmpty(env, 'DATABASE_URL')
  if (databaseUrl && !isPostgresUrl(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://')
  }
  const smtpUrl = nonEmpty(env, 'SMTP_URL')
  if (smtpUrl && !/^smtps?:\/\//.test(smtpUrl))
    throw new ConfigError('SMTP_URL must start with smtp:// or smtps://')
  const publicUrl = (nonEmpty(env, 'PUBLIC_URL') ?? `http://localhost:${port}`).replace(/\/+$/, '')
  try {
    new URL(publicUrl)
  } catch {
    throw new ConfigError(`PUBLIC_URL is not a URL: "${publicUrl}"`)
  }
  const logLevel = nonEmpty(env, 'LOG_LEVEL')?.toLowerCase() ?? 'info'
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`)
  const bootstrapApiKey = nonEmpty(env, 'BOOTSTRAP_API_KEY')
  const adminKey = nonEmpty(env, 'ADMIN_KEY')
  if (adminKey && adminKey.length < 16) throw new ConfigError('ADMIN_KEY must be at least 16 characters')
  return {
    port,
    host: nonEmpty(env, 'HOST') ?? '0.0.0.0',
    role,
    dataDir: path.resolve(nonEmpty(env, 'DATA_DIR') ?? './data'),
    databaseUrl,
    dbPoolSize: int(env, 'DB_POOL_SIZE', 10, 1),
    dbPreparedStatements: flag(env, 'DB_PREPARED_STATEMENTS', true),
    smtpUrl,
    publicUrl,
    publicUrlGiven: nonEmpty(env, 'PUBLIC_URL') !== undefined,
    mailFrom: nonEmpty(env, 'MAIL_FROM') ?? `no-reply@${new URL(publicUrl).hostname}`,
    bounceSmtpPort: optionalPort(env, 'BOUNCE_SMTP_PORT'),
    dnsServers: dnsServers(env),
    allowPrivateNetwork: flag(env, 'ALLOW_PRIVATE_NETWORK'),
    bootstrapApiKey,
    adminKey,
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 1000),
    authFailuresPerMinute: int(env, 'AUTH_FAILS_PER_MINUTE', 60),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024),
    logLevel,
    sendThreads: int(env, 'SEND_THREADS', 2),
    sendLeaseSeconds: int(env, 'SEND_LEASE_SECONDS', 60, 1),
    sendClaimLocks: flag(env, 'SEND_CLAIM_LOCKS', true),
    relayGiveUpHours: int(env, 'RELAY_GIVE_UP_HOURS', 120),
    smtpConnections: int(env, 'SMTP_CONNECTIONS', 10, 1),
    feedMaxBytes: int(env, 'FEED_MAX_BYTES', 200 * 1024 * 1024, 1024),
    feedTimeoutSeconds: int(env, 'FEED_TIMEOUT_SECONDS', 300, 1),
    feedRefreshWaitSeconds: int(env, 'FEED_REFRESH_WAIT_SECONDS', 20),
    feedAutoRefreshHours: int(env, 'FEED_AUTO_REFRESH_HOURS', 24),
    feedItemLimit: 50_000,
    smsGatewayUrl: nonEmpty(env, 'SMS_GATEWAY_URL'),
    automationLeaseSeconds: int(env, 'RUN_LEASE_SECONDS', 60, 1),
  }
}
