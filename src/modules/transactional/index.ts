import type { ModuleDef } from '../registry.js'
import { startTransactionalWorker, TRANSACTIONAL_SEND_JOB } from './transactional.jobs.js'
import { transactionalRoutes } from './transactional.routes.js'

export { messageBatches, type BatchAttachment } from './transactional.table.js'
export { TRANSACTIONAL_SEND_JOB, queueBatch } from './transactional.jobs.js'
export { insertBatch } from './transactional.repo.js'
export { copiesOfRecipient } from './transactional.repo.js'

/** Transactional email (api.md, contract §9): the API intake and the worker that renders and sends each batch. */
export const transactionalModule: ModuleDef = {
  name: 'transactional',
  apiRoutes: transactionalRoutes,
  queues: [TRANSACTIONAL_SEND_JOB],
  startWorker: startTransactionalWorker,
}
