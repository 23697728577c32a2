/** A worker loop that runs rounds until stopped, resting between them (poll-loop.ts). */
export interface PollLoop {
  /** Ends the rest now: the next round starts at once. */
  wake(): void
  /** Stops after the round in hand. */
  stop(): Promise<void>
}

/**
 * Runs `round` again and again until stopped: at once while it says there is more to do, else after `pollMs`
 * or a wake, whichever comes first. A round that throws is logged by `onError` and the loop rests as after an
 * idle round. Bounded by stop(): the process's shutdown ends it after the round in hand.
 */
export function startPollLoop(
  round: () => Promise<boolean>,
  pollMs: number,
  onError: (err: unknown) => void,
): PollLoop {
  let stopped = false
  let again = false
  let wake: (() => void) | undefined
  const loop = (async () => {
    while (!stopped) {
      let more = false
      again = false
      try {
        more = await round()
      } catch (err) {
        onError(err)
      }
      if (more || stopped || again) continue
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs)
        wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      wake = undefined
    }
  })()
  return {
    wake() {
      again = true
      wake?.()
    },
    async stop() {
      stopped = true
      wake?.()
      await loop
    },
  }
}
