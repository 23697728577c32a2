/**
 * A UTF-16 surrogate without its partner: JSON may spell one (`"\ud800"`), but it is no character. Written to
 * a text column it became U+FFFD on the way (the drivers encode strings as UTF-8), while in a jsonb parameter,
 * which repos build with JSON.stringify, it stayed the escape, which PostgreSQL refuses: a 500 (bulk deletes of
 * coupons and purchases, found by sending one to every operation). Replaced by U+FFFD as soon as the body is
 * parsed, so that every road stores the same thing and validation sees what will be stored.
 */
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/** Whether a body's JSON text may hold one: only an escape can (raw UTF-8 cannot encode a surrogate). */
export function mayHoldLoneSurrogate(text: string): boolean {
  return /\\u[dD][89a-fA-F]/.test(text)
}

const wellFormed = (s: string) => s.replace(LONE, '\ufffd')

/**
 * Side effect: replaces every lone surrogate in the strings and object keys of a parsed JSON value by U+FFFD,
 * in place. Walked with a stack of its own, not by recursion (the body's depth is checked after this).
 */
export function replaceLoneSurrogates(value: unknown): unknown {
  if (typeof value === 'string') return wellFormed(value)
  const todo: unknown[] = [value]
  // Bounded by the value's own size: every array and object is pushed once.
  while (todo.length) {
    const v = todo.pop()
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i]
        if (typeof item === 'string') v[i] = wellFormed(item)
        else if (item !== null && typeof item === 'object') todo.push(item)
      }
    } else if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>
      for (const key of Object.keys(o)) {
        const item = o[key]
        const fixed = wellFormed(key)
        if (fixed !== key) {
          delete o[key]
          o[fixed] = item
        }
        if (typeof item === 'string') o[fixed] = wellFormed(item)
        else if (item !== null && typeof item === 'object') todo.push(item)
      }
    }
  }
  return value
}
