import type { ModuleDef } from '../registry.js'
import { emailLogRoutes } from './email-log.routes.js'
import { subscriberReadRoutes } from './subscribers.read.routes.js'
import { subscriberWriteRoutes } from './subscribers.write.routes.js'

export const subscribersModule: ModuleDef = {
  name: 'subscribers',
  apiRoutes: async (app, ctx) => {
    subscriberWriteRoutes(app, ctx)
    subscriberReadRoutes(app, ctx)
    emailLogRoutes(app, ctx)
  },
}
