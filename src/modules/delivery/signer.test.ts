import assert from 'node:assert/strict'
import fs from 'node:fs'
import { describe, it } from 'node:test'
import { createMailSigner } from './signer.js'

/** The nice value of each thread of this process (Linux keeps one per thread; field 19 of its stat). */
function threadNiceValues(): number[] {
  return fs.readdirSync('/proc/self/task').map((tid) => {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
  })
}

describe('signing threads', () => {
  it('sign at a lower priority than the thread that answers API calls', async () => {
    const before = threadNiceValues()
    assert.ok(!before.includes(10), `no thread at nice 10 before the signer starts: ${before.join(' ')}`)
    const signer = createMailSigner(1)
    try {
      // A task with nothing in it still loads the worker module in its thread.
      assert.deepEqual(await signer.sign({ kind: 'body', slices: [] }), [])
      const after = threadNiceValues()
      assert.equal(after.filter((n) => n === 10).length, 1, `one thread at nice 10: ${after.join(' ')}`)
      assert.equal(threadNiceValues()[0], 0, 'the main thread keeps its priority')
    } finally {
      await signer.close()
    }
  })
})
