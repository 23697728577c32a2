import type { ModuleDef } from '../registry.js'
import { emailLogRoutes } from './email-log.routes.js'
import type { ErasureStep } from './subscriber-delete.service.js'
import { subscriberReadRoutes } from './subscribers.read.routes.js'
import { subscriberWriteRoutes } from './subscribers.write.routes.js'

/** `erasureSteps`: what modules above this one do to their rows of an erased address (the module list's). */
export function createSubscribersModule(erasureSteps: readonly ErasureStep[] = []): ModuleDef {
  return {
    name: 'subscribers',
    apiRoutes: async (app, ctx) => {
      subscriberWriteRoutes(app, ctx)
      subscriberReadRoutes(app, ctx, erasureSteps)
      emailLogRoutes(app, ctx)
    },
  }
}
