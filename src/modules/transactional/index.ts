export { messageBatches, type BatchAttachment } from './transactional.table.js'
export { TRANSACTIONAL_SEND_JOB, queueBatch } from './transactional.jobs.js'
export { insertBatch } from './transactional.repo.js'
export { copiesOfRecipient } from './transactional.repo.js'
