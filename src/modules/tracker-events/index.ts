export { trackerEvents } from './tracker-events.table.js'
