import type { ModuleDef } from '../registry.js'
import { CONFIRMATION_MAIL_JOB, startConfirmationWorker } from './confirmation.jobs.js'
import { confirmationRoutes } from './confirmation.routes.js'

/** Double opt-in: the confirmation mail (a job queued with the subscription) and the page its link opens. */
export const confirmationModule: ModuleDef = {
  name: 'confirmation',
  publicRoutes: confirmationRoutes,
  queues: [CONFIRMATION_MAIL_JOB],
  startWorker: startConfirmationWorker,
}
