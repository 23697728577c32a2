import type { FastifyRequest } from 'fastify'
import { fieldError } from '../../core/http/errors.js'
import { CAMPAIGN_FILTERS } from './campaigns.schemas.js'

const NOT_OBJECT = 'The filters must be a JSON object.'

/**
 * ecomail-php sends `GET /campaigns?filters={"status":3,"title":"x"}` (one JSON object) where the documented
 * form is `filters[status]=3&filters[title]=x`. Runs before validation and spreads the object into the
 * bracketed parameters, so both forms are validated, coerced and named in a 422 the same way. A bracketed
 * parameter sent beside the object wins; names outside contract §4 are ignored, as unknown query parameters
 * are; a value that is an object or array is a 422 on its `filters[name]`.
 */
export async function spreadJsonFilters(req: FastifyRequest): Promise<void> {
  const query = req.query as Record<string, unknown>
  const raw = query.filters
  if (raw === undefined) return
  delete query.filters
  // A repeated parameter arrives as an array; one object is what the client means, more is ambiguous.
  if (typeof raw !== 'string') throw fieldError('filters', NOT_OBJECT)
  if (raw.trim() === '') return
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw fieldError('filters', NOT_OBJECT)
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw fieldError('filters', NOT_OBJECT)
  const given = parsed as Record<string, unknown>
  for (const name of CAMPAIGN_FILTERS) {
    const key = `filters[${name}]`
    const value = given[name]
    if (value === undefined || value === null || query[key] !== undefined) continue
    if (typeof value === 'object') throw fieldError(key, `The ${key} must be a single value.`)
    query[key] = String(value)
  }
}
