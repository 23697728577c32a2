import type { preValidationAsyncHookHandler } from 'fastify'
import type { ApiApp } from './app-types.js'
import { notFound } from './errors.js'

interface ParamsSchema {
  properties?: Record<string, { type?: unknown }>
}

/** The names of a route's integer path parameters. */
const integerParams = (schema: ParamsSchema | undefined): string[] =>
  Object.entries(schema?.properties ?? {})
    .filter(([, s]) => s.type === 'integer')
    .map(([name]) => name)

const DECIMAL = /^[0-9]+$/

/**
 * A path id is written in decimal digits, or it names no record (404, as `/lists/abc` does: error-handler.ts).
 * Ajv's coercion, which the query and body need, reads a path's text as JavaScript would (`Number`), so
 * `/lists/0x1`, `/lists/1e0`, `/lists/%201` and `/lists/1.0` all found list 1: one record under many names,
 * which a client's cache or a log reader would not expect. Checked before validation, on the text as sent, and
 * only on the routes that have an integer path parameter (added as each is registered): a tracking hit, whose
 * path holds a token, runs nothing for it.
 */
export function requireDecimalPathIds(app: ApiApp): void {
  app.addHook('onRoute', (route) => {
    const names = integerParams(route.schema?.params as ParamsSchema | undefined)
    if (!names.length) return
    const check: preValidationAsyncHookHandler = async (req) => {
      const params = req.params as Record<string, unknown>
      for (const name of names) {
        const value = params[name]
        if (typeof value === 'string' && !DECIMAL.test(value)) throw notFound()
      }
    }
    // First: a path that names no record is refused before the route's own hooks do any work for it.
    const own = route.preValidation
    route.preValidation = own ? [check, ...(Array.isArray(own) ? own : [own])] : check
  })
}
