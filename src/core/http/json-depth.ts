/**
 * Levels of arrays and objects a request body may nest. Ecomail's payloads nest a handful; past a few thousand,
 * code that walks a value by recursion (JSON.stringify, PostgreSQL's jsonb input) overflows its stack, which
 * was a 500 for a transaction's `props`, a merge variable's content or an automation node's properties.
 */
export const MAX_JSON_DEPTH = 64

/** Why such a body is refused, in the 400 `{message}` of either body parser (JSON or form). */
export const TOO_DEEP = `nested too deeply (more than ${MAX_JSON_DEPTH} levels)`

/**
 * True when `value` nests arrays and objects deeper than `max` (the value itself is level 1). Walked with
 * stacks of its own, visiting containers only: a 3,000-entry bulk body takes a fraction of a millisecond,
 * against several for parsing it.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const values: unknown[] = [value]
  const depths: number[] = [1]
  // Bounded by the value's own size: every container is pushed once.
  while (values.length) {
    const v = values.pop()
    const depth = depths.pop()!
    if (v === null || typeof v !== 'object') continue
    if (depth > max) return true
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') {
        values.push(child)
        depths.push(depth + 1)
      }
    }
  }
  return false
}
