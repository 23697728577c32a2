import assert from 'node:assert/strict'
import fs from 'node:fs'
import { describe, it } from 'node:test'
import { Worker } from 'node:worker_threads'
import { trackableHtml, type CampaignContent } from './render.js'
import type { SignTask } from './sign.worker.js'
import { createMailSigner, threadFlags } from './signer.js'
import { waitFor } from '../../../test/helpers/wait-for.js'

/** The nice value of a thread of this process (Linux keeps one per thread; field 19 of its stat), if it runs. */
function niceOf(tid: string | number): number | undefined {
  let stat: string
  try {
    stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
  } catch {
    // The thread ended between the listing and the read (a signing thread ending, which a test waits for).
    return undefined
  }
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
}

/** The nice values of this process's threads, the main thread's first. */
function threadNiceValues(): number[] {
  const others = fs.readdirSync('/proc/self/task').filter((tid) => tid !== String(process.pid))
  return [process.pid, ...others].map(niceOf).filter((n) => n !== undefined)
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

describe('a signer', () => {
  /** Threads of this process at a signing thread's nice value (see the test above): the signing threads. */
  const signingThreads = () => {
    const values = threadNiceValues()
    const lower = Math.min(19, values[0]! + 10)
    return values.filter((n) => n === lower).length
  }

  it('starts its threads with the first task, not when it is made', async () => {
    const threads = () => fs.readdirSync('/proc/self/task').length
    const before = threads()
    const signer = createMailSigner(2)
    try {
      // new Worker starts its OS thread at once: a pool that started threads would show them here.
      assert.equal(threads(), before, 'no thread started by making the signer')
      assert.equal(signingThreads(), 0)
      assert.deepEqual(await signer.sign({ kind: 'body', slices: [] }), [])
      assert.ok(
        signingThreads() >= 1,
        `a signing thread after the first task: ${threadNiceValues().join(' ')}`,
      )
    } finally {
      await signer.close()
    }
  })

  it('starts every thread when warmed (a campaign being prepared), and none that runs already', async () => {
    const signer = createMailSigner(2)
    try {
      assert.equal(signingThreads(), 0)
      assert.equal(await signer.warm!(), 2)
      assert.equal(signingThreads(), 2, `both threads up: ${threadNiceValues().join(' ')}`)
      assert.equal(await signer.warm!(), 0, 'both running: nothing to start')
      assert.deepEqual(await signer.sign({ kind: 'body', slices: [] }), [])
    } finally {
      await signer.close()
    }
  })

  it("finds a campaign's trackable links on a signing thread, the same as the main thread would", async () => {
    const signer = createMailSigner(1)
    const content = {
      publicUrl: 'https://mail.example',
      html:
        '<html><head><style>a{color:#0a6}</style></head><body><a href="https://shop.example/a?x=1&amp;y=2">A</a>' +
        '<a href="https://shop.example/p?e=*|EMAIL|*">B</a><a href="https://mail.example/u/1">own</a></body></html>',
    }
    try {
      assert.equal(signingThreads(), 0)
      const links = await signer.links!(content)
      assert.deepEqual(links, ['https://shop.example/a?x=1&y=2', 'https://shop.example/p?e=*|EMAIL|*'])
      assert.deepEqual(links, trackableHtml(content).links)
      assert.equal(signingThreads(), 1, 'the thread that found them')
    } finally {
      await signer.close()
    }
  })

  it('ends its threads when they have waited idleMs for work, and starts them again with the next task', async () => {
    const signer = createMailSigner(2, { idleMs: 200 })
    try {
      assert.deepEqual(await signer.sign({ kind: 'body', slices: [] }), [])
      assert.ok(signingThreads() >= 1, 'a signing thread after the task')
      await waitFor(() => signingThreads() === 0, 5000, 'the idle signing threads to end')
      assert.deepEqual(await signer.sign({ kind: 'body', slices: [] }), [])
      assert.ok(signingThreads() >= 1, 'a signing thread again with the next task')
    } finally {
      await signer.close()
    }
  })
})

describe('the signing queue', () => {
  it('gives a waiting task marked ahead (and a links task) to the next free thread, before tasks that came earlier', async () => {
    const signer = createMailSigner(1)
    try {
      // The thread is up and idle: the first task below goes to it at once, the others wait in the queue.
      assert.deepEqual(await signer.sign({ kind: 'body', slices: [] }), [])
      const done: string[] = []
      const sign = (name: string, ahead: boolean) =>
        signer.sign({ kind: 'body', slices: [] }, { ahead }).then(() => void done.push(name))
      await Promise.all([
        sign('campaign 1', false),
        sign('campaign 2', false),
        sign('campaign 3', false),
        sign('order', true),
        signer.links!({
          html: '<a href="https://shop.example/">x</a>',
          publicUrl: 'https://mail.example',
        }).then(() => void done.push('links')),
      ])
      // Piscina may requeue a task it could not hand over at the back of the queue, so the campaign tasks
      // waiting need not keep their order among themselves; the order's task goes before them either way.
      assert.deepEqual(done.slice(0, 3), ['campaign 1', 'order', 'links'], done.join(', '))
      assert.equal(done.length, 5)
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

describe('buffers given back to the signing threads', () => {
  const content: CampaignContent = {
    campaignId: 1,
    subject: 'Hello *|name|*',
    fromName: 'Shop',
    fromEmail: 'news@shop.example',
    replyTo: '',
    html: `<p>Hello *|name|*</p><p>${'Spring collection, news and offers. '.repeat(60)}</p>`,
    plainText: null,
    bounceDomain: 'shop.example',
    dkim: undefined,
    publicUrl: 'https://mail.shop.example',
    linkSecret: 'secret-of-the-instance-0123456789',
  }
  const task = (ids: number[]): SignTask => ({
    kind: 'campaign',
    key: 'given-back',
    content,
    recipients: ids.map((id) => ({
      messageId: id,
      email: `r${id}@example.cz`,
      name: '',
      vars: { name: `R${id}` },
    })),
  })

  it("hold the next task's messages, each whole and its own", async () => {
    const signer = createMailSigner(1)
    try {
      const first = await signer.sign(task(Array.from({ length: 40 }, (_, i) => i + 1)))
      const firstBuffer = first[0]!.raw.buffer
      const firstSize = firstBuffer.byteLength
      assert.ok(firstSize > 65_536, `forty messages take more than the smallest buffer: ${firstSize}`)
      signer.release!(first)
      // One message: a buffer of its own would be the smallest size; it is written into the one given back.
      const [second] = await signer.sign(task([41]))
      assert.equal(firstBuffer.byteLength, 0, 'the buffer moved back to the thread')
      assert.equal(first[0]!.raw.byteLength, 0, "the first task's views are empty")
      assert.equal(second!.raw.buffer.byteLength, firstSize, 'the second message is in the buffer given back')
      const text = Buffer.from(second!.raw).toString('utf8')
      assert.ok(text.includes('To: r41@example.cz\r\n'), text.slice(0, 400))
      assert.ok(text.includes('Hello R41'))
      assert.ok(!/r(?:[1-9]|[1-3]\d|40)@example\.cz/.test(text), 'nothing of the messages before it')
      assert.ok(text.endsWith('\r\n'))
      assert.equal(second!.dataSafe, true, 'CRLF only, no line starting with a dot: SMTP takes it as it is')
      // Given back twice, or once its views are empty: nothing happens.
      signer.release!(first)
      assert.deepEqual(await signer.sign({ kind: 'body', slices: [] }), [])
    } finally {
      await signer.close()
    }
  })
})
