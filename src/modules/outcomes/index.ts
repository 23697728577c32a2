/**
 * What happened to a message, recorded in one place: its event, the milestone on its ledger row, the
 * statistics counters, the subscriber's suppression or unsubscription and the webhook outbox, in one
 * transaction. It sits above the modules it writes to (events, messages, subscribers, webhooks), which never
 * import it; the paths where outcomes arrive (tracking, bounces, the senders) call it.
 */
export { createEventRecorder, type EventRecorder } from './event-recorder.js'
export { insertEvent, recordHits, type Hit } from './outcomes.repo.js'
export { sendOutcomes } from './send-outcomes.js'
