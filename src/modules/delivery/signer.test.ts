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
  it('sign 10 nice levels below the thread that answers API calls', async () => {
    const main = threadNiceValues()[0]!
    const lower = Math.min(19, main + 10)
    const before = threadNiceValues()
    assert.ok(
      !before.includes(lower),
      `no thread at nice ${lower} before the signer starts: ${before.join(' ')}`,
    )
    const signer = createMailSigner(1)
    try {
      // A task with nothing in it still loads the worker module in its thread.
      assert.deepEqual(await signer.sign({ kind: 'body', slices: [] }), [])
      const after = threadNiceValues()
      assert.equal(
        after.filter((n) => n === lower).length,
        1,
        `one thread at nice ${lower}: ${after.join(' ')}`,
      )
      assert.equal(threadNiceValues()[0], main, 'the main thread keeps its priority')
    } finally {
      await signer.close()
    }
  })
})
