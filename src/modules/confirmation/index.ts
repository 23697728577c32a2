import type { ModuleDef } from '../registry.js'
import { confirmationRoutes } from './confirmation.routes.js'

export { queueConfirmationMail } from './confirmation.queue.js'
export type { PendingConfirmation } from './confirmation.repo.js'

/** Double opt-in: the confirmation mail (queued in the send ledger with the subscription) and its page. */
export const confirmationModule: ModuleDef = {
  name: 'confirmation',
  publicRoutes: confirmationRoutes,
}
