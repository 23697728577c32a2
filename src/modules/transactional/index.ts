// The body table and its cc/bcc reader live in the delivery module; re-exported for existing callers.
export { messageBatches, type BatchAttachment, copiesOfRecipient } from '../delivery/index.js'
