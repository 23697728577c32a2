import type { FieldErrorBag } from '../../core/http/errors.js'
import { longerThan } from '../../core/http/text-length.js'

/**
 * Small checks the pipeline validator shares. Each reports into a FieldErrorBag under a dotted wire path
 * (`actions.3.properties.tag`, the form the schema validation and the condition parser use) with messages in
 * the Laravel style of the rest of the API, and returns the normalised value or undefined.
 */

export const MAX_INT = 2147483647

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

export const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key))

/** The name used in messages: the last path segment, with its parent when it is an array index (`yes.0`). */
export function label(path: string): string {
  const parts = path.split('.')
  const last = parts[parts.length - 1] ?? path
  if (/^\d+$/.test(last) && parts.length > 1) return `${parts[parts.length - 2]}.${last}`
  return last
}

const blank = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '')

/** A required string (numbers are taken as their text), trimmed, at most `max` characters. */
export function requiredText(bag: FieldErrorBag, v: unknown, path: string, max: number): string | undefined {
  const text = typeof v === 'number' && Number.isFinite(v) ? String(v) : v
  if (blank(text)) bag.add(path, `The ${label(path)} field is required.`)
  else if (typeof text !== 'string') bag.add(path, `The ${label(path)} must be a string.`)
  else if (longerThan(text.trim(), max))
    bag.add(path, `The ${label(path)} must not be greater than ${max} characters.`)
  else return text.trim()
  return undefined
}

/** An optional string: absent or null gives undefined without an error. */
export function optionalText(bag: FieldErrorBag, v: unknown, path: string, max: number): string | undefined {
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'string') bag.add(path, `The ${label(path)} must be a string.`)
  else if (longerThan(v, max)) bag.add(path, `The ${label(path)} must not be greater than ${max} characters.`)
  else return v
  return undefined
}

/** An integer in [min, max], also from a numeric string (PHP clients send "3"). */
export function requiredInteger(
  bag: FieldErrorBag,
  v: unknown,
  path: string,
  min = 1,
  max = MAX_INT,
): number | undefined {
  if (blank(v)) {
    bag.add(path, `The ${label(path)} field is required.`)
    return undefined
  }
  const n =
    typeof v === 'number' && Number.isInteger(v)
      ? v
      : typeof v === 'string' && /^\s*-?\d{1,10}\s*$/.test(v)
        ? Number(v)
        : undefined
  if (n === undefined) bag.add(path, `The ${label(path)} must be an integer.`)
  else if (n < min) bag.add(path, `The ${label(path)} must be at least ${min}.`)
  else if (n > max) bag.add(path, `The ${label(path)} must not be greater than ${max}.`)
  else return n
  return undefined
}

/** A finite number greater than zero and at most `max` (numeric strings accepted). */
export function positiveNumber(
  bag: FieldErrorBag,
  v: unknown,
  path: string,
  max: number,
): number | undefined {
  if (blank(v)) {
    bag.add(path, `The ${label(path)} field is required.`)
    return undefined
  }
  const n =
    typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : NaN
  if (!Number.isFinite(n)) bag.add(path, `The ${label(path)} must be a number.`)
  else if (n <= 0) bag.add(path, `The ${label(path)} must be greater than 0.`)
  else if (n > max) bag.add(path, `The ${label(path)} must not be greater than ${max}.`)
  else return n
  return undefined
}

/** One of `allowed`, or the default when absent. */
export function oneOf<T extends string>(
  bag: FieldErrorBag,
  v: unknown,
  path: string,
  allowed: readonly T[],
  fallback?: T,
): T | undefined {
  if ((v === undefined || v === null) && fallback !== undefined) return fallback
  if (v === undefined || v === null) bag.add(path, `The ${label(path)} field is required.`)
  else if (typeof v === 'string' && (allowed as readonly string[]).includes(v)) return v as T
  else bag.add(path, `The selected ${label(path)} is invalid.`)
  return undefined
}
