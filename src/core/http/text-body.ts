import type { FastifyRequest } from 'fastify'
import { HttpError } from './errors.js'

/** What a body's text was read as, or the 400 message that refuses it. */
export type BodyRead = { value: unknown } | { refused: string }

/**
 * A Fastify body parser (`parseAs: 'string'`) for a text body type: blank text is no body, and a body `read`
 * refuses is a 400 `{message}`. The JSON and form parsers (json-body.ts, form-body.ts) differ only in `read`.
 */
export function textBodyParser(read: (text: string, req: FastifyRequest) => BodyRead) {
  return (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    const text = String(body)
    if (text.trim() === '') return done(null, undefined)
    const r = read(text, req)
    if ('refused' in r) return done(new HttpError(400, { message: r.refused }), undefined)
    done(null, r.value)
  }
}
