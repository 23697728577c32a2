import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import { loadConfig, type Config } from './core/config.js'
import { createContext, type AppContext, type ContextOverrides } from './core/context.js'
import { createAccountService, startJobQueue } from './modules/index.js'
import { startWorker } from './worker.js'

export interface RunningServer {
  ctx: AppContext
  app: FastifyInstance | undefined
  /** The bound address when ROLE runs the API. */
  url: string | undefined
  stop(): Promise<void>
}

/** Starts what ROLE asks for on one context: the API (all, api) and the workers (all, worker). */
export async function startServer(
  config: Config = loadConfig(),
  overrides: ContextOverrides = {},
): Promise<RunningServer> {
  const ctx = await createContext(config, overrides)
  let app: FastifyInstance | undefined
  try {
    const created = await createAccountService(ctx).bootstrap(config.bootstrapApiKey)
    if (created) {
      // Printed once, on the first start of an empty installation; never logged.
      process.stdout.write(
        `\nTidings: created account ${created.account_id}. Its API key (shown only now):\n\n  ${created.api_key}\n\n`,
      )
    }
    await startJobQueue(ctx)
    if (config.role !== 'api') await startWorker(ctx)
    let url: string | undefined
    if (config.role !== 'worker') {
      app = await buildApp(ctx)
      url = await app.listen({ port: config.port, host: config.host })
    }
    // Mail's links are made from PUBLIC_URL, by workers and API processes alike: one process trying it out
    // (ROLE=all, mail to the outbox) may do without, real sending or several processes may not. Logged before
    // the start line, which tells a watcher the start is done.
    if (!config.publicUrlGiven && (config.smtpUrl || config.role !== 'all'))
      ctx.log.warn(
        { publicUrl: config.publicUrl },
        'PUBLIC_URL is not set: links in mail lead to this localhost address; set it to the address ' +
          'recipients reach, the same on every process',
      )
    ctx.log.info({ role: config.role, url, database: ctx.dbHandle.kind }, 'tidings started')
    let stopping: Promise<void> | undefined
    return {
      ctx,
      app,
      url,
      stop() {
        stopping ??= (async () => {
          await app?.close()
          await ctx.close()
        })()
        return stopping
      },
    }
  } catch (err) {
    await app?.close().catch(() => undefined)
    await ctx.close().catch(() => undefined)
    throw err
  }
}
