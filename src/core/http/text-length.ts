/**
 * Whether text has more than `max` characters, counted as the API's limits count them: code points, as
 * Laravel's `max:` rule (mb_strlen) and Ajv's `maxLength` do. `String.length` counts UTF-16 units, so an emoji
 * counts twice there and 26 of them broke a 50-character tag limit.
 */
export function longerThan(text: string, max: number): boolean {
  // Each code point is one or two units: within `max` units it is within `max` characters, beyond 2 × max
  // units beyond them. Only the text between is counted.
  if (text.length <= max) return false
  if (text.length > 2 * max) return true
  let n = 0
  for (const _ of text) if (++n > max) return true
  return false
}
