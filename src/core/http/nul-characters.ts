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

interface Visit {
  value: unknown
  key: string
  parent: Visit | undefined
}

/** Segments of a field path the error names at most (a body may nest far deeper; the start says where). */
const PATH_SEGMENTS_MAX = 16

function pathOf(visit: Visit): string[] {
  const path: string[] = []
  for (let at: Visit | undefined = visit; at?.parent; at = at.parent) path.push(at.key)
  return path.reverse().slice(0, PATH_SEGMENTS_MAX)
}

/**
 * Where `value` holds U+0000 (in a string or an object key): the path of the first one, as the validation
 * errors name fields (`subscriber_data.0.name`), or undefined. Walked with a stack of its own, not by
 * recursion, and with each step pointing at its parent rather than carrying its path: a body may nest arrays
 * a million deep within the size limit.
 */
export function nulPath(value: unknown): string[] | undefined {
  const todo: Visit[] = [{ value, key: '', parent: undefined }]
  // Bounded by the value's own size: every element is pushed once.
  while (todo.length) {
    const visit = todo.pop()!
    const v = visit.value
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return pathOf(visit)
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) todo.push({ value: v[i], key: String(i), parent: visit })
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v)
      if (entries.some(([k]) => k.includes('\u0000'))) return pathOf(visit)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!
        todo.push({ value: child, key, parent: visit })
      }
    }
  }
  return undefined
}

/** Requests whose body text may hold a NUL: only their parsed bodies are searched. */
const mayHoldNul = new WeakSet<FastifyRequest>()

/** Called by the JSON body parser with the body's text (a NUL can only arrive escaped in JSON). */
export function noteBodyText(req: FastifyRequest, text: string): void {
  if (text.includes('\\u0000')) mayHoldNul.add(req)
}

/** Called by the form body parser (form-body.ts) with the body's text: there a NUL is `%00`, or the raw character. */
export function noteFormText(req: FastifyRequest, text: string): void {
  if (text.includes('%00') || text.includes('\u0000')) mayHoldNul.add(req)
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
