export { queueConfirmationMail } from './confirmation.queue.js'
export type { PendingConfirmation } from './confirmation.repo.js'
