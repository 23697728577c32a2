import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createBatcher } from './batcher.js'

/** A run that the test finishes by hand, so what gathers while it is "in the database" is under control. */
function controlledRun() {
  const runs: { items: number[]; finish: () => void; fail: (e: Error) => void }[] = []
  const run = (items: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      runs.push({ items, finish: () => resolve(items.map((n) => `r${n}`)), fail: reject })
    })
  return { runs, run }
}

const tick = () => new Promise((r) => setImmediate(r))

test('calls of one turn share a run; calls arriving meanwhile gather into the next run', async () => {
  const { runs, run } = controlledRun()
  const call = createBatcher(run, { maxBatch: 10, maxInFlight: 1 })
  const first = [call(1), call(0)]
  assert.equal(runs.length, 0, 'the run starts when the turn is over')
  await tick()
  assert.deepEqual(
    runs.map((r) => r.items),
    [[1, 0]],
  )
  const later = [call(2), call(3), call(4)]
  await tick()
  assert.equal(runs.length, 1, 'no second run while the first is in flight')
  runs[0]!.finish()
  assert.deepEqual(await Promise.all(first), ['r1', 'r0'])
  await tick()
  assert.deepEqual(runs[1]!.items, [2, 3, 4])
  runs[1]!.finish()
  assert.deepEqual(await Promise.all(later), ['r2', 'r3', 'r4'])
})

test('runs hold at most maxBatch items and at most maxInFlight run at once', async () => {
  const { runs, run } = controlledRun()
  const call = createBatcher(run, { maxBatch: 2, maxInFlight: 2 })
  const all = [1, 2, 3, 4, 5, 6, 7].map((n) => call(n))
  await tick()
  assert.deepEqual(
    runs.map((r) => r.items),
    [
      [1, 2],
      [3, 4],
    ],
  )
  runs[0]!.finish()
  await tick()
  assert.deepEqual(runs[2]!.items, [5, 6])
  for (let i = 1; i < 10 && runs[i]; i++) {
    runs[i]!.finish()
    await tick()
  }
  assert.deepEqual(await Promise.all(all), ['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7'])
  assert.ok(runs.every((r) => r.items.length <= 2))
})

test('a failing run rejects each of its callers, and later calls still run', async () => {
  const { runs, run } = controlledRun()
  const call = createBatcher(run, { maxBatch: 10, maxInFlight: 1 })
  const a = call(1)
  await tick()
  const b = call(2)
  runs[0]!.fail(new Error('boom'))
  await assert.rejects(a, /boom/)
  await tick()
  runs[1]!.fail(new Error('bang'))
  await assert.rejects(b, /bang/)
  const c = call(3)
  await tick()
  runs[2]!.finish()
  assert.equal(await c, 'r3')
})

test('a run answering the wrong number of results fails its callers instead of mixing answers up', async () => {
  const call = createBatcher(async (items: number[]) => items.slice(1), { maxBatch: 10, maxInFlight: 1 })
  await assert.rejects(call(1), /batch of 1 answered 0/)
})
