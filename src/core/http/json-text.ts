import sjson from 'secure-json-parse'
import { MAX_JSON_DEPTH, nestedDeeperThan, TOO_DEEP } from './json-depth.js'
import { mayHoldLoneSurrogate, replaceLoneSurrogates } from './lone-surrogates.js'

/**
 * JSON text read under a request body's rules: `__proto__` and `constructor.prototype` keys dropped, at most
 * MAX_JSON_DEPTH levels, lone UTF-16 surrogates as U+FFFD. The request body parser (app.ts) and JSON that a
 * client sends inside a string field (custom fields as a text setting) both read it so. The error says why not.
 */
export function parseJsonText(text: string): { value: unknown } | { error: string } {
  let parsed: unknown
  try {
    parsed = sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' })
  } catch {
    return { error: 'not valid JSON' }
  }
  if (nestedDeeperThan(parsed, MAX_JSON_DEPTH)) return { error: TOO_DEEP }
  return { value: mayHoldLoneSurrogate(text) ? replaceLoneSurrogates(parsed) : parsed }
}
