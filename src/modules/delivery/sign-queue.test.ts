import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { queueOptionsSymbol } from 'piscina'
import { AheadFirstQueue, queuedAs } from './sign-queue.js'

/** A queued task as piscina hands it over: its queue options under the symbol, and a name for the test. */
const task = (name: string, ahead?: boolean) =>
  ({ name, [queueOptionsSymbol]: ahead === undefined ? null : { ahead } }) as const

describe('the signing queue', () => {
  it('hands out tasks marked ahead first, each kind in the order it came', () => {
    const q = new AheadFirstQueue()
    for (const t of [task('c1'), task('o1', true), task('c2', false), task('o2', true), task('c3')]) q.push(t)
    assert.equal(q.size, 5)
    const order = Array.from({ length: 6 }, () => (q.shift() as { name: string } | null)?.name ?? null)
    assert.deepEqual(order, ['o1', 'o2', 'c1', 'c2', 'c3', null])
    assert.equal(q.size, 0)
  })

  it('removes a task from either kind', () => {
    const q = new AheadFirstQueue()
    const [c1, c2, o1, o2] = [task('c1'), task('c2'), task('o1', true), task('o2', true)]
    for (const t of [c1, o1, c2, o2]) q.push(t)
    q.remove(c1)
    q.remove(o1)
    assert.equal(q.size, 2)
    assert.equal(q.shift(), o2)
    assert.equal(q.shift(), c2)
  })

  it("marks a copy of a task, leaving the caller's object as it was", () => {
    const original = { kind: 'body', slices: [] }
    const marked = queuedAs(original, { ahead: true })
    assert.deepEqual((marked as Record<symbol, unknown>)[queueOptionsSymbol], { ahead: true })
    assert.equal(Object.getOwnPropertySymbols(original).length, 0)
    assert.deepEqual(structuredClone(marked), original, 'the mark does not travel to the thread')
  })
})
