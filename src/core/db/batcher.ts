export interface BatcherOptions {
  /** Items one run takes at most; the rest wait for the next. */
  maxBatch: number
  /** Runs at once; another run starts only when one is free, so waiting items gather into it. */
  maxInFlight: number
}

/**
 * Turns many concurrent single calls into few runs of `run` over the items that arrived together: calls
 * made in one turn of the event loop (the requests one poll of the sockets brought) start a run together
 * once that turn is over, or, when every run is busy, wait with the others for the next free one. Under load
 * a run takes everything that came while the previous ones were in the database, so a round trip, a plan
 * and a commit serve dozens of requests; alone, a call waits only for the end of its turn. Waiting for the
 * turn matters most with the embedded database, which does its work inside the promise chain of the call
 * that asked: started at once, each call would run alone before the next request was even read.
 * `run` answers one result per item, in order; when it throws, every item of that run gets the error.
 */
export function createBatcher<I, O>(
  run: (items: I[]) => Promise<O[]>,
  opts: BatcherOptions,
): (item: I) => Promise<O> {
  interface Waiting {
    item: I
    resolve: (value: O) => void
    reject: (err: unknown) => void
  }
  const queue: Waiting[] = []
  let inFlight = 0
  let turnEndScheduled = false

  function pump(): void {
    while (inFlight < opts.maxInFlight && queue.length > 0) {
      const batch = queue.splice(0, opts.maxBatch)
      inFlight++
      void runBatch(batch).finally(() => {
        inFlight--
        pump()
      })
    }
  }

  async function runBatch(batch: Waiting[]): Promise<void> {
    try {
      const results = await run(batch.map((w) => w.item))
      if (results.length !== batch.length)
        throw new Error(`batch of ${batch.length} answered ${results.length}`)
      batch.forEach((w, i) => w.resolve(results[i]!))
    } catch (err) {
      for (const w of batch) w.reject(err)
    }
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject })
      if (turnEndScheduled) return
      turnEndScheduled = true
      setImmediate(() => {
        turnEndScheduled = false
        pump()
      })
    })
}
