import type { ModuleDef } from '../registry.js'
import { transactionalRoutes } from './transactional.routes.js'

/**
 * Transactional email (api.md, contract §9): the API intake, which queues the mail in the send ledger; the
 * delivery module's sender renders and sends it.
 */
export const transactionalModule: ModuleDef = {
  name: 'transactional',
  apiRoutes: transactionalRoutes,
}
