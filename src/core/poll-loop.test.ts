import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startPollLoop } from './poll-loop.js'

/** Waits (bounded) until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 5))
  assert.ok(done(), 'not reached within a second')
}

describe('startPollLoop', () => {
  it('runs again at once while rounds find more, rests after one that does not, and wakes', async () => {
    const more = [true, true, false, false]
    let rounds = 0
    const errors: unknown[] = []
    // A rest of a minute: only wake() or stop() ends it within the test.
    const loop = startPollLoop(
      async () => {
        rounds++
        if (rounds === 4) throw new Error('round failed')
        return more.shift() ?? false
      },
      60_000,
      (err) => errors.push(err),
    )
    await until(() => rounds === 3)
    await new Promise((r) => setTimeout(r, 20))
    assert.equal(rounds, 3, 'resting')
    loop.wake()
    await until(() => errors.length === 1)
    assert.equal(rounds, 4)
    loop.wake()
    await until(() => rounds === 5)
    await loop.stop()
    assert.equal(rounds, 5)
  })
})
