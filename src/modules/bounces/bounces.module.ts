import type { AppContext } from '../../core/context.js'
import type { ModuleDef } from '../registry.js'
import type { UnsubscribeLists } from './bounce-handler.js'
import { startBounceListener } from './bounce-listener.js'

/**
 * Inbound bounces, complaints and mailto unsubscribes: runs where the workers run, when BOUNCE_SMTP_PORT is set.
 * `unsubscribeLists` comes from the module list, which knows the modules that own a message's lists.
 */
export function createBouncesModule(unsubscribeLists: (ctx: AppContext) => UnsubscribeLists): ModuleDef {
  return {
    name: 'bounces',
    async startWorker(ctx) {
      const port = ctx.config.bounceSmtpPort
      if (!port) return
      const listener = await startBounceListener(ctx, port, unsubscribeLists(ctx))
      ctx.onClose(listener.close)
    },
  }
}
