import type { Executor } from '../../core/db/client.js'
import type { PipelineRow } from '../pipelines/index.js'
import { MAX_CHAIN } from './run-chain.js'
import { anyRunOf, insertRun, listMember, lockPipelineContact } from './runs.repo.js'

export type StartOutcome =
  | { kind: 'started'; runId: number }
  /** `once` re-entry: the pipeline already ran for this subscriber; the earlier run's id. */
  | { kind: 'refused'; runId: number }
  /** The address is not a subscribed member of the pipeline's list; `status` when it is a member all the same. */
  | { kind: 'not_in_list'; status?: number }
  /** MAX_CHAIN runs were started in a row by automations without a pause (run-chain.ts): a loop, stopped. */
  | { kind: 'loop' }

/**
 * Starts a run of the pipeline for `email` inside the caller's transaction (the trigger and its cause commit
 * together): only for a subscribed member of the pipeline's list, and under `once` re-entry never twice per
 * pipeline and contact (serialised per pair, so two triggers at once start one run). `chain`: the run is
 * started by automations, the chain-th in a row without a pause (run-chain.ts); none beyond MAX_CHAIN.
 */
export async function startRun(
  tx: Executor,
  pipeline: Pick<PipelineRow, 'id' | 'accountId' | 'listId' | 'version' | 'start' | 'reentry'>,
  email: string,
  triggerKind: string,
  now: Date,
  chain = 0,
): Promise<StartOutcome> {
  if (chain > MAX_CHAIN) return { kind: 'loop' }
  const member = await listMember(tx, pipeline.accountId, pipeline.listId, email)
  if (member?.status !== 1) return { kind: 'not_in_list', status: member?.status }
  const contactId = member.id
  if (pipeline.reentry === 'once') {
    await lockPipelineContact(tx, pipeline.id, contactId)
    const earlier = await anyRunOf(tx, pipeline.id, contactId)
    if (earlier !== undefined) return { kind: 'refused', runId: earlier }
  }
  const runId = await insertRun(tx, {
    accountId: pipeline.accountId,
    pipelineId: pipeline.id,
    pipelineVersion: pipeline.version,
    contactId,
    email,
    triggerKind,
    nodeId: pipeline.start,
    now,
    state: chain > 0 ? { chain } : {},
  })
  return { kind: 'started', runId }
}
