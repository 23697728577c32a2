export { registerIdempotency } from './idempotency.hooks.js'
