import type { FastifyServerOptions } from 'fastify'

/**
 * Refusing numbers that are not finite where a route's schema asks for a number or an integer.
 *
 * Ajv, coercing a query or path string, turns `1e400`, `Infinity` and `-Infinity` into ±Infinity and takes them
 * as integers (its check after coercion is only `data == +data && !(data % 1)`), and it skips `minimum` and
 * `maximum` for a number that is not finite (the checks it generates are guarded by isFinite). So `?page=1e400`
 * reached SQL as `OFFSET Infinity`, and `/lists/Infinity` as an id: a 500 instead of a 422 or a 404, on every
 * route that takes a number from a string. The keyword below fails such a value; `withFiniteNumbers` puts it on
 * every number and integer schema of a route as the route's validator is compiled, so no schema has to say it.
 */

type AjvPlugins = NonNullable<NonNullable<FastifyServerOptions['ajv']>['plugins']>
/** An Ajv plugin as Fastify takes it (the Ajv instance of its compiler in, the same out). */
type AjvPlugin = Extract<AjvPlugins[number], (...args: never[]) => unknown>

/** The keyword's name; validation errors name it (error-handler.ts words them). */
export const FINITE_KEYWORD = 'finite'

/**
 * Ajv plugin (Fastify's `ajv.plugins`): the `finite` keyword. For any type of data, not just numbers: Ajv
 * applies a keyword of type number only to finite numbers (its `strictNumbers`), so it would never see Infinity.
 */
export const finiteNumbers: AjvPlugin = (ajv) =>
  ajv.addKeyword({
    keyword: FINITE_KEYWORD,
    schemaType: 'boolean',
    errors: false,
    validate: (schema: boolean, data: unknown) =>
      !schema || typeof data !== 'number' || Number.isFinite(data),
  })

/** Keywords whose values are data, not schemas: left as they are. */
const DATA_KEYS = new Set(['const', 'enum', 'default', 'examples', 'example'])
/** Keywords whose values map names to schemas: a property may be called `default` and still be a schema. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'])

function marked(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(marked)
  if (node === null || typeof node !== 'object') return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (DATA_KEYS.has(key)) out[key] = value
    else if (SCHEMA_MAPS.has(key) && value !== null && typeof value === 'object')
      out[key] = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, marked(schema)]))
    else out[key] = marked(value)
  }
  const type = (node as { type?: unknown }).type
  const types: unknown[] = Array.isArray(type) ? type : [type]
  if (types.includes('integer') || types.includes('number')) out[FINITE_KEYWORD] = true
  return out
}

/** Copies made, by the schema they were made of: Ajv caches compiled schemas by the object it is given. */
const copies = new WeakMap<object, unknown>()

/** A copy of the schema with the `finite` keyword on every number and integer schema in it. */
export function withFiniteNumbers<T>(schema: T): T {
  if (schema === null || typeof schema !== 'object') return schema
  let copy = copies.get(schema)
  if (copy === undefined) {
    copy = marked(schema)
    copies.set(schema, copy)
  }
  return copy as T
}
