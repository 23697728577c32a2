import v8 from 'node:v8'

/**
 * How far V8 lets a heap grow past what its last full collection kept before it collects again, in percent.
 * A sending server allocates fast and keeps little: a batch's rows and messages live a few hundred milliseconds,
 * long enough to be promoted out of the young generation, then die. With V8's own factor (about 3×) the main
 * heap of a campaign send kept 45 MB live yet grew to 155 MB between full collections, most of the send's
 * RSS above idle (README, Memory); at 40 % it grows to about 70 MB. The price is more full collections, each
 * incremental and a few tens of milliseconds.
 */
export const HEAP_GROWING_PERCENT = 40

/**
 * Applies HEAP_GROWING_PERCENT to the process (V8's flags are process-wide, so the signing threads' heaps
 * too), unless the node command line already sets it.
 */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((a) => a.startsWith('--heap-growing-percent'))) return false
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`)
  return true
}
