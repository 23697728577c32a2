import type { ModuleDef } from '../registry.js'
import { startBounceListener } from './bounce-listener.js'

/** Inbound bounces and complaints: runs where the workers run, when BOUNCE_SMTP_PORT is set. */
export const bouncesModule: ModuleDef = {
  name: 'bounces',
  async startWorker(ctx) {
    const port = ctx.config.bounceSmtpPort
    if (!port) return
    const listener = await startBounceListener(ctx, port)
    ctx.onClose(listener.close)
  },
}
