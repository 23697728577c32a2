import { Piscina } from 'piscina'
import { signMessages, type SignTask, type SignedMessage } from './sign.worker.js'

/** Composes and signs mail; RSA signing is the costliest step of a send, so it gets threads. */
export interface MailSigner {
  sign(task: SignTask): Promise<SignedMessage[]>
  close(): Promise<void>
}

/** Young generation of a signing thread: 50 messages of a chunk in flight are well under 1 MB. */
const SIGN_THREAD_YOUNG_MB = 8

export function createMailSigner(threads: number): MailSigner {
  if (threads <= 0) return { sign: signMessages, close: async () => undefined }
  // Compiled (dist/, what `npm start` runs): the worker is JavaScript beside this file and a thread loads it
  // as it is. From the sources (tests, through tsx): TypeScript, which a thread loads through tsx of its own.
  const compiled = import.meta.url.endsWith('.js')
  const filename = new URL(compiled ? './sign.worker.js' : './sign.worker.ts', import.meta.url).href
  const pool = new Piscina<SignTask, SignedMessage[]>({
    filename,
    minThreads: threads,
    maxThreads: threads,
    // Compiled: the process's own node flags, as Node's workers take by default (so `--cpu-prof` profiles the
    // threads too); from the sources, tsx's loader.
    execArgv: compiled ? process.execArgv : ['--import', 'tsx'],
    idleTimeout: 60_000,
    // Each message is garbage a moment after it is signed: a small young generation is swept often and
    // cheaply, where V8's default lets each thread's grow by tens of MB under a big campaign (issue 11: RSS).
    resourceLimits: { maxYoungGenerationSizeMb: SIGN_THREAD_YOUNG_MB },
  })
  return {
    sign: (task) => pool.run(task),
    close: () => pool.destroy(),
  }
}
