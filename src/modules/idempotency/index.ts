export { registerIdempotency } from './idempotency.hooks.js'
export { ABANDONED_MS } from './idempotency.repo.js'
