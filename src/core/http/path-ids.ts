import type { ApiApp } from './app-types.js'
import { notFound } from './errors.js'

interface ParamsSchema {
  properties?: Record<string, { type?: unknown }>
}

/** The names of a route's integer path parameters, found once per route schema. */
const integerNames = new WeakMap<object, string[]>()

function integerParams(schema: ParamsSchema): string[] {
  let names = integerNames.get(schema)
  if (!names) {
    names = Object.entries(schema.properties ?? {})
      .filter(([, s]) => s.type === 'integer')
      .map(([name]) => name)
    integerNames.set(schema, names)
  }
  return names
}

const DECIMAL = /^[0-9]+$/

/**
 * A path id is written in decimal digits, or it names no record (404, as `/lists/abc` does: error-handler.ts).
 * Ajv's coercion, which the query and body need, reads a path's text as JavaScript would (`Number`), so
 * `/lists/0x1`, `/lists/1e0`, `/lists/%201` and `/lists/1.0` all found list 1: one record under many names,
 * which a client's cache or a log reader would not expect. Checked before validation, on the text as sent.
 */
export function requireDecimalPathIds(app: ApiApp): void {
  app.addHook('preValidation', async (req) => {
    const schema = req.routeOptions.schema?.params as ParamsSchema | undefined
    if (!schema) return
    const params = req.params as Record<string, unknown>
    for (const name of integerParams(schema)) {
      const value = params[name]
      if (typeof value === 'string' && !DECIMAL.test(value)) throw notFound()
    }
  })
}
