import assert from 'node:assert/strict'
import fs from 'node:fs'
import { describe, it } from 'node:test'
import { Worker } from 'node:worker_threads'
import { createMailSigner, threadFlags } from './signer.js'

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

describe('the flags signing threads start with', () => {
  it("keep the profilers' flags and drop V8's, which a worker thread refuses", async () => {
    const flags = threadFlags([
      '--trace-gc',
      '--cpu-prof',
      '--cpu-prof-dir=/tmp/p',
      '--perf-basic-prof',
      '--heap-prof',
    ])
    assert.deepEqual(flags, ['--cpu-prof', '--cpu-prof-dir=/tmp/p', '--heap-prof'])
    // What the filter is for: given a V8 flag, a worker does not start at all.
    assert.throws(
      () => new Worker('0', { eval: true, execArgv: ['--trace-gc'] }),
      (e: NodeJS.ErrnoException) => e.code === 'ERR_WORKER_INVALID_EXEC_ARGV',
    )
    const w = new Worker('0', { eval: true, execArgv: threadFlags(['--trace-gc']) })
    assert.equal(await new Promise((r) => w.once('exit', r)), 0)
  })
})
