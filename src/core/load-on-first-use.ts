import { createRequire } from 'node:module'

const load = createRequire(import.meta.url)

/** What `make` returns, made at the first call of the returned function and kept. */
export function onFirstUse<T>(make: () => T): () => T {
  let made: { value: T } | undefined
  return () => (made ??= { value: make() }).value
}

/**
 * A package loaded the first time the returned function is called, not when the importing file loads. For the
 * big packages only some processes need (CSS inlining, HTML to text, pretty logs), called from code that is
 * synchronous: hence require, so the package must offer CommonJS.
 */
export function loadOnFirstUse<T>(specifier: string): () => T {
  return onFirstUse(() => load(specifier) as T)
}
