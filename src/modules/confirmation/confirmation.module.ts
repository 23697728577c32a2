import type { ModuleDef } from '../registry.js'
import { confirmationRoutes } from './confirmation.routes.js'

/** Double opt-in: the confirmation mail (queued in the send ledger with the subscription) and its page. */
export const confirmationModule: ModuleDef = {
  name: 'confirmation',
  publicRoutes: confirmationRoutes,
}
