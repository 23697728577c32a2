// First: an older Node.js stops here with a clear message, before any module that needs a newer one loads.
import './core/node-version.js'
import fs from 'node:fs'
import { parseArgs } from 'node:util'
import { ConfigError, isPostgresUrl, loadConfig } from './core/config.js'
import { DatabaseBusyError } from './core/db/lock.js'
import type { AppContext } from './core/context.js'
import type { Plan } from './core/http/auth.js'
import type { AccountService } from './modules/accounts/index.js'

const USAGE = `Usage: tidings <command>

  serve                                   run the service (npm start runs it compiled, in less memory)
  migrate                                 apply database migrations
  account create --name N [--plan free|paid|marketer] [--json]
  key create --account ID [--json]        print a new API key for an account
  key revoke --key KEY                    revoke an API key
  copy-to-postgres --to URL [--json]      copy the embedded database into an empty PostgreSQL one

The database is DATABASE_URL, or the embedded one under DATA_DIR (one process at a time).`

class UsageError extends Error {}

// The database layer and the modules load only for the commands that use them: --help and usage errors stay fast.
async function withContext<T>(fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const config = { ...loadConfig(), logLevel: 'warn' }
  const { createContext } = await import('./core/context.js')
  const ctx = await createContext(config)
  try {
    return await fn(ctx)
  } finally {
    await ctx.close()
  }
}

// The accounts module alone, not every module through modules/index.ts: a key command loads 0.3 s less.
async function withAccounts<T>(fn: (accounts: AccountService) => Promise<T>): Promise<T> {
  const { createAccountService } = await import('./modules/accounts/index.js')
  return withContext((ctx) => fn(createAccountService(ctx)))
}

/**
 * The embedded database under DATA_DIR into the PostgreSQL database at `url` (core/db/copy-database.ts). The
 * embedded one's lock keeps a running service out meanwhile (DatabaseBusyError).
 */
async function copyToPostgres(url: string) {
  const config = loadConfig()
  const { openDatabase, embeddedDatabaseDir } = await import('./core/db/client.js')
  // Opening a folder with none would make an empty database there, and the copy would "succeed" with nothing.
  if (!fs.existsSync(embeddedDatabaseDir(config.dataDir)))
    throw new ConfigError(`there is no embedded database in ${config.dataDir} (DATA_DIR)`)
  const { copyDatabase } = await import('./core/db/copy-database.js')
  const { MIGRATIONS_DIR } = await import('./core/context.js')
  const source = await openDatabase({ dataDir: config.dataDir })
  try {
    const target = await openDatabase({ databaseUrl: url, poolSize: 2 })
    try {
      return await copyDatabase(source, target, MIGRATIONS_DIR)
    } finally {
      await target.close()
    }
  } finally {
    await source.close()
  }
}

function print(json: boolean, obj: Record<string, unknown>, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(obj)}\n` : `${text}\n`)
}

const VALUE_OPTIONS = ['--name', '--plan', '--account', '--key', '--to']
const OPTIONS = [...VALUE_OPTIONS, '--json', '--help', '-h', '--']

/**
 * `--key VALUE` → `--key=VALUE`: parseArgs refuses a separate value that starts with a dash, and an API key is
 * base64url, so one in 32 starts with `-`. A following known option is not taken as the value.
 */
function joinOptionValues(argv: string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = argv[i + 1]
    if (VALUE_OPTIONS.includes(arg) && value !== undefined && !OPTIONS.includes(value)) {
      out.push(`${arg}=${value}`)
      i++
    } else out.push(arg)
  }
  return out
}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: joinOptionValues(argv),
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        plan: { type: 'string' },
        account: { type: 'string' },
        key: { type: 'string' },
        to: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    })
  } catch (err) {
    // Unknown option, missing value: bad usage, not a failure of the command.
    throw new UsageError(err instanceof Error ? err.message : String(err))
  }
}

/**
 * The options each command takes besides --help, and how many words may follow its name (`key revoke KEY`). An
 * option or word given to a command that does not use it is refused rather than ignored: `copy-to-postgres
 * --plan paid` or `account create --to …` means the user expected something the command will not do.
 */
const COMMANDS: Record<string, { options: readonly string[]; words?: number }> = {
  serve: { options: [] },
  migrate: { options: ['json'] },
  'account create': { options: ['name', 'plan', 'json'] },
  'key create': { options: ['account', 'json'] },
  'key revoke': { options: ['key', 'json'], words: 1 },
  'copy-to-postgres': { options: ['to', 'json'] },
}

/** The command the positionals name, or a usage error naming what is wrong with them and the options. */
function commandOf(positionals: string[], values: Record<string, unknown>): string {
  const [cmd, sub] = positionals
  const command = COMMANDS[cmd!] ? cmd! : `${cmd} ${sub ?? ''}`.trim()
  const spec = COMMANDS[command]
  if (!spec) throw new UsageError(`unknown command "${positionals.join(' ')}"`)
  const words = command.split(' ').length + (spec.words ?? 0)
  if (positionals.length > words)
    throw new UsageError(`unexpected "${positionals.slice(words).join(' ')}" after ${command}`)
  const unused = Object.keys(values).filter((k) => values[k] !== undefined && !spec.options.includes(k))
  if (unused.length)
    throw new UsageError(`${command} does not take ${unused.map((k) => `--${k}`).join(', ')}`)
  return command
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parse(argv)
  if (values.help || !positionals.length) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const json = values.json ?? false
  switch (commandOf(positionals, values)) {
    case 'serve':
      await import('./main.js')
      return
    case 'migrate':
      // The job queue's schema too (the service makes it at start otherwise): an operator may migrate with a
      // role that can create schemas and run the service with one that cannot.
      await withContext(async (ctx) => {
        const { startJobQueue } = await import('./modules/index.js')
        await startJobQueue(ctx)
      })
      print(json, { migrated: true }, 'Migrations applied.')
      return
    case 'account create': {
      const name = values.name?.trim()
      if (!name) throw new UsageError('account create needs --name')
      const plan = (values.plan ?? 'free') as Plan
      const { PLANS } = await import('./modules/accounts/index.js')
      if (!PLANS.includes(plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`)
      const created = await withAccounts((accounts) => accounts.createAccount(name, plan))
      print(
        json,
        { ...created },
        `Account ${created.account_id} created. API key (shown once): ${created.api_key}`,
      )
      return
    }
    case 'key create': {
      const id = Number(values.account)
      if (!Number.isInteger(id) || id < 1) throw new UsageError('key create needs --account <id>')
      const apiKey = await withAccounts((accounts) => accounts.createKey(id))
      print(json, { account_id: id, api_key: apiKey }, `API key (shown once): ${apiKey}`)
      return
    }
    case 'key revoke': {
      const key = values.key ?? positionals[2]
      if (!key) throw new UsageError('key revoke needs --key <api key>')
      await withAccounts((accounts) => accounts.revokeKey(key))
      print(json, { revoked: true }, 'Key revoked.')
      return
    }
    case 'copy-to-postgres': {
      const to = values.to
      if (!to || !isPostgresUrl(to)) throw new UsageError('copy-to-postgres needs --to postgres://…')
      const report = await copyToPostgres(to)
      const rows = report.tables.reduce((n, t) => n + t.rows, 0)
      const lines = report.tables.filter((t) => t.rows > 0).map((t) => `  ${t.name}: ${t.rows}`)
      print(
        json,
        { ...report },
        `Copied ${rows} rows of ${report.tables.length} tables and ${report.sequences} sequences:\n${lines.join('\n')}`,
      )
      return
    }
  }
}

run(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`tidings: ${err.message}\n\n${USAGE}\n`)
    process.exit(64)
  }
  // A refused copy (a target with data of its own) is the user's to mend, as a bad setting is.
  const refused = err instanceof Error && err.name === 'CopyRefusedError'
  if (err instanceof ConfigError || err instanceof DatabaseBusyError || refused) {
    process.stderr.write(`tidings: ${err.message}\n`)
    process.exit(2)
  }
  const message = err instanceof Error ? err.message : String(err)
  process.stderr.write(`tidings: ${message}\n`)
  process.exit(1)
})
