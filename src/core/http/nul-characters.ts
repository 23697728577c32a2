import type { FastifyRequest } from 'fastify'
import type { ApiApp } from './app-types.js'
import { notFound, validationFailed } from './errors.js'
import { validationErrors } from './error-handler.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The status this route answers invalid input with, where it is not the contract's 422 (bulk update: 400). */
    invalidStatus?: number
  }
}

/**
 * Where `value` holds U+0000 (in a string or an object key): the path of the first one, as the validation
 * errors name fields (`subscriber_data.0.name`), or undefined. Bounded by the value's own size.
 */
export function nulPath(value: unknown, path: string[] = []): string[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulPath(value[i], [...path, String(i)])
      if (found) return found
    }
    return undefined
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) return path
      const found = nulPath(v, [...path, k])
      if (found) return found
    }
  }
  return undefined
}

/** Requests whose JSON text spells `\u0000` somewhere: only their parsed bodies are searched. */
const mayHoldNul = new WeakSet<FastifyRequest>()

/** Called by the JSON body parser with the body's text (a NUL can only arrive escaped in JSON). */
export function noteBodyText(req: FastifyRequest, text: string): void {
  if (text.includes('\\u0000')) mayHoldNul.add(req)
}

const nulError = (path: string[], status: number) =>
  validationFailed(
    validationErrors([
      {
        instancePath: path.length ? `/${path.join('/')}` : '',
        keyword: 'nul',
        params: {},
        message: 'must not contain a NUL character',
      },
    ]),
    status,
  )

/**
 * PostgreSQL's text and jsonb cannot hold U+0000: a statement given one fails, which was a 500 (found by
 * sending malformed input to every operation). Input holding one is refused before any handler sees it: in
 * the path it names no record (404, as a path id that is no id does); in the query or the body it is a
 * validation error in the route's shape (422, or the route's `invalidStatus`).
 */
export function rejectNulCharacters(app: ApiApp): void {
  app.addHook('preValidation', async (req) => {
    if (nulPath(req.params)) throw notFound()
    const status = req.routeOptions.config.invalidStatus ?? 422
    const inQuery = nulPath(req.query)
    if (inQuery) throw nulError(inQuery, status)
    if (!mayHoldNul.has(req)) return
    const inBody = nulPath(req.body)
    if (inBody) throw nulError(inBody, status)
  })
}
