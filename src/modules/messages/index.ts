export { messages, type MessageKind } from './messages.table.js'
export {
  findMessage,
  findTrackedMessage,
  findTrackedMessages,
  insertMessages,
  markAccepted,
  markRefused,
  queuedOfBatch,
  reachMilestone,
  type MessageRow,
  type Milestone,
  type NewMessage,
  type TrackedMessage,
} from './messages.repo.js'
export { composeMessage, type ComposedMessage, type MessageContent } from '../../core/mail/compose-message.js'
export { contactMergeText, contactMergeVars, type ContactForMerge } from './contact-vars.js'
export { contactMergeColumns } from './contact-merge.repo.js'
