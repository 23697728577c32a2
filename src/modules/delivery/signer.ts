import { Piscina } from 'piscina'
import { signMessages, type LinksTask, type SignTask, type SignedMessage } from './sign.worker.js'
import { AheadFirstQueue, queuedAs, type SignQueueOptions } from './sign-queue.js'

/** Composes and signs mail; RSA signing is the costliest step of a send, so it gets threads. */
export interface MailSigner {
  /** `ahead`: signed before the tasks waiting without it (sign-queue.ts). */
  sign(task: SignTask, options?: SignQueueOptions): Promise<SignedMessage[]>
  /**
   * Gives back the memory of a task's messages once every one of them was handed to the relay and its
   * sendRaw settled (the mailer keeps no reference to it): a signing thread writes the next task's messages
   * into it. Their `raw` views are empty afterwards.
   */
  release?(messages: readonly SignedMessage[]): void
  /**
   * Starts the threads that are not running, each loading what compiling a campaign needs, without waiting:
   * called when a campaign is being prepared, so that this happens while its recipients are frozen rather than
   * after, before its first message (about half a second of the 2.3 s from a 100,000 send's call to its first
   * signed message, measured). How many threads it started, once they are up.
   */
  warm?(): Promise<number>
  /**
   * The campaign's trackable links by index (render.ts, trackableHtml), found on a signing thread. The first
   * time, most of it is loading the CSS inliner: on the main thread that stopped the API's calls and the sender
   * 0.29-0.72 s while a campaign's recipients were frozen (measured beside transactional mail).
   */
  links?(content: Omit<LinksTask, 'kind'>): Promise<string[]>
  close(): Promise<void>
}

/**
 * Young generation of a signing thread. A message makes some 15 to 40 times its size in short-lived strings
 * while it is rendered, encoded and signed, so the size sets how often the thread stops to sweep. At 8 MB the
 * sweeps and what they promoted cost a campaign message 20-35 µs of a signing thread (microbenchmark), and the
 * server 0.66-0.67 ms against 0.62-0.63 ms at 24 MB (alternating 60,000-message sends); peak RSS of a
 * 1,000,000-recipient send went from 252 to 275 MB (bar: 300). V8's default lets it grow to tens of MB.
 */
const SIGN_THREAD_YOUNG_MB = 24

/**
 * Given-back buffers a task takes to its thread, and how many wait here: a sender has some ten tasks in
 * flight (two lanes of five), and each task done gives one back.
 */
const SPARES_PER_TASK = 2
const RETURNED_MAX = 8

/**
 * Of the process's node flags, those a worker thread takes. V8's own (`--trace-gc`, `--perf-basic-prof`…) apply
 * to the whole process already, and a worker given one refuses to start (ERR_WORKER_INVALID_EXEC_ARGV), which
 * made the server fail to start when profiled with them.
 */
export function threadFlags(flags: string[]): string[] {
  return flags.filter((f) => /^--(cpu-prof|heap-prof|enable-source-maps)/.test(f))
}

/** How long a signing thread waits for work before it ends (it starts again with the next task). */
const SIGN_THREAD_IDLE_MS = 60_000

export function createMailSigner(threads: number, opts: { idleMs?: number } = {}): MailSigner {
  if (threads <= 0) return { sign: signMessages, close: async () => undefined }
  // Compiled (dist/, what `npm start` runs): the worker is JavaScript beside this file and a thread loads it
  // as it is. From the sources (tests, through tsx): TypeScript, which a thread loads through tsx of its own.
  const compiled = import.meta.url.endsWith('.js')
  const filename = new URL(compiled ? './sign.worker.js' : './sign.worker.ts', import.meta.url).href
  const pool = new Piscina<SignTask | LinksTask, SignedMessage[] | string[]>({
    filename,
    // Started with the first mail to sign, and ended after a minute without any (idleTimeout): a process that
    // sends nothing (an API process beside separate workers, most test files) never pays a thread's start-up,
    // some 0.3 s of a core each loading the mail code, nor holds its heap. A burst starts them all at once.
    minThreads: 0,
    maxThreads: threads,
    // Compiled: the process's own profiling flags (so `--cpu-prof` profiles the threads too); from the sources,
    // tsx's loader.
    execArgv: compiled ? threadFlags(process.execArgv) : ['--import', 'tsx'],
    idleTimeout: opts.idleMs ?? SIGN_THREAD_IDLE_MS,
    // Bounded (issue 11: RSS), but not so small that sweeping becomes a large part of the thread's work.
    resourceLimits: { maxYoungGenerationSizeMb: SIGN_THREAD_YOUNG_MB },
    taskQueue: new AheadFirstQueue(),
  })
  // Buffers given back (release), moved to a thread with the next tasks (sign.worker.ts: why).
  const returned: ArrayBuffer[] = []
  return {
    sign: (task, options) => {
      const spare = returned.splice(0, SPARES_PER_TASK)
      const given = spare.length ? { ...task, spare } : task
      const queued = options ? queuedAs(given, options) : given
      // A sign task's answer is its messages (sign.worker.ts, signMail).
      return (spare.length ? pool.run(queued, { transferList: spare }) : pool.run(queued)) as Promise<
        SignedMessage[]
      >
    },
    release: (messages) => {
      const buffer = messages[0]?.raw.buffer
      // Not one moved already (empty), nor a shared one, and a bounded number waiting.
      if (!(buffer instanceof ArrayBuffer) || buffer.byteLength === 0 || returned.length >= RETURNED_MAX)
        return
      if (!returned.includes(buffer)) returned.push(buffer)
    },
    warm: async () => {
      const starting = Array.from({ length: Math.max(0, threads - pool.threads.length) }, () =>
        pool.run({ kind: 'warm' }).then(
          () => 1,
          // A thread that fails to start fails the next task too, which reports it.
          () => 0,
        ),
      )
      let started = 0
      for (const s of starting) started += await s
      return started
    },
    // Its answer is the links (sign.worker.ts, signMail). Ahead of waiting campaign tasks: a campaign's
    // preparation waits for it, holding its transaction open.
    links: (content) =>
      pool.run(queuedAs({ kind: 'links', ...content }, { ahead: true })) as Promise<string[]>,
    close: () => pool.destroy(),
  }
}
