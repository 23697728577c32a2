/**
 * How many runs automations started one from another without a pause: a `trigger` node starting a pipeline, or
 * a `tag`/`subscribe` node whose signal starts one. Kept in a run's state as `chain` (absent: 0, a run started
 * by the subscriber, the shop or the API). A loop through pipelines (a trigger node starting its own pipeline,
 * A → B → A, a tag flow adding its own tag again) would otherwise start runs without end under `repeat`
 * re-entry, exponentially through a fork; the cycle check of a pipeline's graph sees none of them. A pause (a
 * wait, a goal or webhook retry: the run due later) ends the chain, as a wait is what makes a cycle inside a
 * pipeline allowed: such a loop goes at the pace of its waits, like a cycle in one pipeline.
 */

/** Runs started in a row by automations, without a pause, beyond which no further run starts. */
export const MAX_CHAIN = 5

/**
 * The chain a run is in (0: started from outside the engine, or paused since), or that a signal carries (its
 * payload's `chain`, written by a tag or subscribe node; 0 for the API's and subscribers' own).
 */
export function chainOf(state: Record<string, unknown>): number {
  const c = state.chain
  return typeof c === 'number' && Number.isInteger(c) && c > 0 ? c : 0
}

/** The chain of a run that the run with `state` starts (by a trigger node, or through a signal). */
export const nextChain = (state: Record<string, unknown>): number => chainOf(state) + 1

/** The state of a run that pauses: its chain ends. */
export function paused(state: Record<string, unknown>): Record<string, unknown> {
  if (!('chain' in state)) return state
  const { chain: _ended, ...rest } = state
  return rest
}

/** For the signals of a node's statement: each contact's next chain, the longest of its runs at the node. */
export function nextChainsByContact(
  runs: readonly { contactId: number | null; state: Record<string, unknown> }[],
): Record<string, number> {
  const out: Record<string, number> = {}
  for (const r of runs) {
    if (r.contactId === null) continue
    const key = String(r.contactId)
    out[key] = Math.max(out[key] ?? 0, nextChain(r.state))
  }
  return out
}
