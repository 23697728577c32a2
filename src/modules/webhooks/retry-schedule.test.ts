import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { backoffMs, nextAttemptAt, retryAfterMs, RETRY_WINDOW_MS } from './retry-schedule.js'

describe('webhook retry schedule', () => {
  it('doubles from 30 s up to 1 h, jittered into [0.5, 1) of that', () => {
    assert.deepEqual(
      [1, 2, 3, 8, 9, 30].map((n) => backoffMs(n, () => 0)),
      [15_000, 30_000, 60_000, 1_800_000, 1_800_000, 1_800_000],
    )
    assert.equal(
      backoffMs(1, () => 0.999999),
      30_000,
    )
  })

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = new Date('2026-01-02T03:04:05Z')
    assert.equal(retryAfterMs('120', now), 120_000)
    assert.equal(retryAfterMs(['7'], now), 7000)
    assert.equal(retryAfterMs('Fri, 02 Jan 2026 03:05:05 GMT', now), 60_000)
    assert.equal(retryAfterMs('Fri, 02 Jan 2026 03:00:00 GMT', now), 0)
    assert.equal(retryAfterMs('soon', now), undefined)
    assert.equal(retryAfterMs(undefined, now), undefined)
  })

  it('never retries earlier than Retry-After asks, nor past the 24 h window', () => {
    const createdAt = new Date('2026-01-02T00:00:00Z')
    const at = (now: Date, retryAfter?: number) =>
      nextAttemptAt({ now, createdAt, attempts: 1, retryAfterMs: retryAfter, random: () => 0 })?.getTime()
    assert.equal(at(createdAt), createdAt.getTime() + 15_000)
    assert.equal(at(createdAt, 600_000), createdAt.getTime() + 600_000)
    assert.equal(at(createdAt, 2 * RETRY_WINDOW_MS), createdAt.getTime() + RETRY_WINDOW_MS)
    assert.equal(at(new Date(createdAt.getTime() + RETRY_WINDOW_MS)), undefined)
  })
})
