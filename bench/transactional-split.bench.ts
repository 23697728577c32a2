import type { ServerProcess } from './lib/server-process.js'
import type { PostfixSink } from './lib/smtp-sink.js'
import { transactionalCalls, transactionalWaits, type TransactionalWaits } from './lib/transactional-calls.js'
import { BENCH_DOMAIN, sinkReaches, verifiedBenchDomain } from './transactional.bench.js'

export interface TransactionalSplitFigures extends TransactionalWaits {
  /** Calls a second asked for, calls made and those answered 200. */
  perSec: number
  calls: number
  accepted: number
}

/**
 * Issue 11, processes apart: a shop's order confirmations at `perSec` calls a second for `seconds`, to a ROLE=api
 * process, sent by a ROLE=worker process of the same PostgreSQL database; how long each call's mail waited, from
 * its row's commit to the relay's acceptance marked (the ledger). Without a wake across processes a worker finds
 * such mail on its idle poll.
 */
export async function benchTransactionalSplit(
  apiProcess: ServerProcess,
  sink: PostfixSink,
  publish: (records: { type: string; host: string; value: string }[]) => void,
  seconds: number,
  perSec: number,
): Promise<TransactionalSplitFigures> {
  if (!apiProcess.databaseUrl) throw new Error('processes apart share a PostgreSQL database')
  await verifiedBenchDomain(apiProcess, publish)
  const before = sink.count()
  const progress = { calls: 0, accepted: 0 }
  const { url, key } = apiProcess
  await transactionalCalls(url, key, BENCH_DOMAIN, perSec, () => false, Date.now() + seconds * 1000, progress)
  const arrived = (await sinkReaches(sink, before + progress.accepted, 120_000)) - before
  if (progress.accepted === 0 || progress.accepted < progress.calls)
    throw new Error(`${progress.accepted} of ${progress.calls} calls accepted`)
  if (arrived < progress.accepted)
    throw new Error(`${arrived} of ${progress.accepted} accepted calls' mail arrived`)
  const { sent, ...waits } = await transactionalWaits(apiProcess.databaseUrl)
  if (sent !== progress.accepted) throw new Error(`${progress.accepted} calls accepted, ${sent} marked sent`)
  return { perSec, calls: progress.calls, accepted: progress.accepted, ...waits }
}
