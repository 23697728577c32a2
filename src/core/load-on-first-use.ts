import { createRequire } from 'node:module'

const load = createRequire(import.meta.url)

/**
 * A package loaded the first time the returned function is called, not when the importing file loads. For the
 * big packages only some processes need (CSS inlining, HTML to text, pretty logs), called from code that is
 * synchronous: hence require, so the package must offer CommonJS.
 */
export function loadOnFirstUse<T>(specifier: string): () => T {
  let loaded: T | undefined
  return () => (loaded ??= load(specifier) as T)
}
