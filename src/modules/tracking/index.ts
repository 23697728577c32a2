export { readClickToken, readMessageToken, trackingLinks } from './tracking.links.js'
export { sendMailHtml } from './tracking.replies.js'
export { storedSources, type MessageSources } from './tracking.sources.js'
