import { Piscina } from 'piscina'
import signCampaignMail, { type SignTask, type SignedMessage } from './campaign-sign.worker.js'

/** Composes and signs campaign mail; RSA signing is the costliest step of a send, so it gets threads. */
export interface CampaignSigner {
  sign(task: SignTask): Promise<SignedMessage[]>
  close(): Promise<void>
}

export function createCampaignSigner(threads: number): CampaignSigner {
  if (threads <= 0) return { sign: async (task) => signCampaignMail(task), close: async () => undefined }
  const filename = new URL('./campaign-sign.worker.ts', import.meta.url).href
  const pool = new Piscina<SignTask, SignedMessage[]>({
    filename,
    minThreads: threads,
    maxThreads: threads,
    // The worker file is TypeScript: threads load it through tsx, however the main thread was started.
    execArgv: ['--import', 'tsx'],
    idleTimeout: 60_000,
  })
  return {
    sign: (task) => pool.run(task),
    close: () => pool.destroy(),
  }
}
