export { messageBatches, type BatchAttachment } from './transactional.table.js'
export { TRANSACTIONAL_SEND_JOB } from './transactional.jobs.js'
export { copiesOfRecipient } from './transactional.repo.js'
