export { CONFIRMATION_MAIL_JOB, queueConfirmationMail } from './confirmation.jobs.js'
export type { PendingConfirmation } from './confirmation.repo.js'
