// First: an older Node.js stops here with a clear message, before any module that needs a newer one loads.
import './core/node-version.js'
import { limitHeapGrowth } from './core/heap-growth.js'
import { ConfigError, loadConfig } from './core/config.js'
import { DatabaseBusyError } from './core/db/lock.js'
import { startServer, type RunningServer } from './server.js'

async function main(): Promise<void> {
  const config = loadConfig()
  // Before the server allocates: its heaps (the signing threads' too) grow less between full collections.
  limitHeapGrowth()
  const state: { server?: RunningServer; requested?: string } = {}
  const shutdown = (signal: string) => {
    state.requested = signal
    const server = state.server
    // A signal while starting (migrations, the embedded database opening) is acted on once the start is done, so
    // the database and its lock are closed cleanly rather than cut off midway; a second signal still kills.
    if (!server) return
    server.ctx.log.info({ signal }, 'shutting down')
    const force = setTimeout(() => process.exit(1), 15_000)
    force.unref()
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        server.ctx.log.error({ err }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  // Installed before the start: a process manager may stop us the moment the start is logged, or before.
  process.once('SIGINT', shutdown)
  process.once('SIGTERM', shutdown)
  state.server = await startServer(config)
  if (state.requested) shutdown(state.requested)
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof DatabaseBusyError) {
    process.stderr.write(`tidings: ${err.message}\n`)
    process.exit(2)
  }
  process.stderr.write(
    `tidings: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  )
  process.exit(1)
})
