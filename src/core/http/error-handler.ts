import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { isForeignKeyViolation, missingReferenceTable } from '../db/errors.js'
import { HttpError, type FieldErrors } from './errors.js'
import { FINITE_KEYWORD } from './finite-numbers.js'
import { loggablePath } from './log-path.js'

interface AjvIssue {
  instancePath: string
  keyword: string
  params: Record<string, unknown>
  message?: string
}

/** `/subscriber_data/0/email` → `subscriber_data.0.email` */
function fieldPath(issue: AjvIssue): string {
  let p = issue.instancePath.replace(/^\//, '').replace(/\//g, '.')
  if (issue.keyword === 'required' && typeof issue.params.missingProperty === 'string') {
    p = p ? `${p}.${issue.params.missingProperty}` : issue.params.missingProperty
  }
  return p.replace(/~1/g, '/').replace(/~0/g, '~') || 'body'
}

/** Messages in the style Ecomail's (Laravel) validation uses, so clients that show them read naturally. */
function messageFor(field: string, issue: AjvIssue): string {
  // The last segment names the field; an array element is named with its array (`tags.3`, not `3`).
  const name = /(?:^|\.)([^.]+\.\d+|[^.]+)$/.exec(field)?.[1] ?? field
  const p = issue.params
  switch (issue.keyword) {
    case 'required':
      return `The ${name} field is required.`
    case 'type':
      return `The ${name} must be of type ${String(p.type)}.`
    case 'format':
      return p.format === 'email'
        ? `The ${name} must be a valid email address.`
        : `The ${name} format is invalid.`
    case 'minimum':
      return `The ${name} must be at least ${String(p.limit)}.`
    case 'maximum':
      return `The ${name} must not be greater than ${String(p.limit)}.`
    case 'minLength':
      return `The ${name} must be at least ${String(p.limit)} characters.`
    case 'maxLength':
      return `The ${name} must not be greater than ${String(p.limit)} characters.`
    case 'maxItems':
      return `The ${name} must not have more than ${String(p.limit)} items.`
    case 'minItems':
      return `The ${name} must have at least ${String(p.limit)} items.`
    case 'enum':
    case 'const':
    case 'anyOf':
      return `The selected ${name} is invalid.`
    case 'pattern':
      return `The ${name} format is invalid.`
    case FINITE_KEYWORD:
      return `The ${name} must be a number.`
    default:
      return `The ${name} ${issue.message ?? 'is invalid'}.`
  }
}

export function validationErrors(issues: AjvIssue[]): FieldErrors {
  const errors: FieldErrors = {}
  // A failed anyOf also reports each of its branches; its own summary is the useful message.
  const unionPaths = issues.filter((i) => i.keyword === 'anyOf').map((i) => i.instancePath)
  for (const issue of issues) {
    const insideUnion = unionPaths.some(
      (p) => issue.instancePath === p || issue.instancePath.startsWith(`${p}/`),
    )
    if (issue.keyword !== 'anyOf' && insideUnion) continue
    const field = fieldPath(issue)
    const list = (errors[field] ??= [])
    const msg = messageFor(field, issue)
    if (!list.includes(msg)) list.push(msg)
  }
  return errors
}

/**
 * What a request is told when the record it named was deleted while it ran, by the table the write found its
 * row missing from: the same words the services use when the record is missing from the start.
 */
const GONE_MESSAGES: Partial<Record<string, string>> = {
  accounts: 'Account not found',
  contacts: 'Subscriber not found',
  coupon_folders: 'Coupon folder not found',
  feeds: 'Feed not found',
  lists: 'List not found',
  recommenders: 'Recommender not found',
  transactions: 'Transaction not found',
}

/** The one place that turns any thrown error into the contract's wire shapes (contract §1). */
export async function errorHandler(err: FastifyError | HttpError, req: FastifyRequest, reply: FastifyReply) {
  if (err instanceof HttpError) {
    reply.headers(err.headers)
    return reply.code(err.statusCode).send(err.body)
  }
  const fe = err as FastifyError & { validation?: AjvIssue[]; validationContext?: string }
  // Contract §1: an unknown record is a 404. A path id that is no id at all (`/lists/abc`, or past the
  // integer range) names no record either, as with Laravel's numeric route constraints.
  if (fe.validation && fe.validationContext === 'params')
    return reply.code(404).send({ message: 'Not Found' })
  if (fe.validation) return reply.code(422).send({ errors: validationErrors(fe.validation) })
  // Contract §1 again: the record the request named went away while it ran (another request deleted it), so
  // its write found no row to refer to. Nothing was written (the statement failed in its transaction).
  if (isForeignKeyViolation(err)) {
    const table = missingReferenceTable(err)
    req.log.info(
      { method: req.method, url: loggablePath(req.url), table },
      'a record the request refers to is gone',
    )
    return reply.code(404).send({ message: (table && GONE_MESSAGES[table]) ?? 'Not Found' })
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return reply.code(413).send({ message: 'Request body is too large.' })
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return reply.code(415).send({ message: 'Content-Type must be application/json.' })
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return reply.code(400).send({ message: 'The request body is not valid JSON.' })
  }
  const status = fe.statusCode ?? 500
  if (status >= 400 && status < 500) return reply.code(status).send({ message: fe.message })
  req.log.error({ err }, 'unhandled error')
  return reply.code(500).send({ message: 'Internal Server Error' })
}
