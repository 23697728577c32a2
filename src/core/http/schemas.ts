import { Kind, Type, type Static, type TSchema } from '@sinclair/typebox'

/** Shared TypeBox pieces for the contract's error shapes and common parameters. */
export const MessageError = Type.Object({ message: Type.String() }, { $id: 'MessageError' })
export const FieldErrorsBody = Type.Object(
  { errors: Type.Record(Type.String(), Type.Array(Type.String())) },
  { $id: 'FieldErrors' },
)
export const ErrorList = Type.Object({ errors: Type.Array(Type.String()) }, { $id: 'ErrorList' })
export const ErrorString = Type.Object({ errors: Type.String() }, { $id: 'ErrorString' })

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

/**
 * A request flag: a boolean, or `'1'`/`'0'`, which PHP clients send for a yes/no read from a form or a setting
 * (Ajv's coercion already takes 1/0 and 'true'/'false' into the boolean branch). Read it with `flagOn`.
 */
export const Flag = (options: { description?: string; default?: boolean } = {}) =>
  Type.Union([Type.Boolean(), Type.Literal('1'), Type.Literal('0')], options)
export type FlagT = Static<ReturnType<typeof Flag>>
export const flagOn = (value: FlagT): boolean => value === true || value === '1'

/**
 * A request field of one JSON type that may also be null, as a type list (`type: ['string', 'null']`) rather than
 * a union: Ajv coerces only data of none of the listed types, so null stays null, '' stays '' and 0 stays 0. A
 * union is coerced branch by branch: `string` tried first turns null into '' (and `integer`, into 0); `null` tried
 * first let a one-element array (`["a"]`) through uncoerced to the service, which a POST /campaigns answered
 * with a 500. Here an array is refused (422) or unwrapped to a value of the listed types (Ajv's `[0]` to null for
 * a nullable integer), never passed on. For responses, Nullable.
 */
export const OrNull = <T extends TSchema & { type: string }>(t: T) => {
  // Without TypeBox's kind mark of `t`, which would still call the schema a plain string (or integer…).
  const { [Kind]: _kind, ...schema } = t
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [t.type, 'null'] })
}

/** Error responses every authenticated route can give. */
export const commonErrors = {
  401: MessageError,
  404: MessageError,
  413: MessageError,
  422: FieldErrorsBody,
  429: MessageError,
  500: MessageError,
} as const

/** '' is what form builders and PHP's http_build_query send for "not chosen": no filter, as when absent. */
export const orBlank = <T extends TSchema>(t: T) => Type.Union([t, Type.Literal('')])

/**
 * `page` of a paged list, from 1. Absent, 0 or negative is the first page, as Laravel's paginator (Ecomail's)
 * reads it: clients that count pages from 0 get page 1 rather than an error. Past the last page: an empty page.
 */
export const PageNumber = Type.Optional(
  Type.Integer({
    minimum: -2147483648,
    maximum: 2147483647,
    default: 1,
    description: 'from 1; 0 or less is 1',
  }),
)

/** `per_page` of a paged list: 1 to `maximum`, `fallback` when absent (each list has its own limits). */
export const PerPage = (maximum: number, fallback: number) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum, default: fallback }))

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647 }) })
export const Deleted = Type.Object({ deleted: Type.Boolean() })
/** Free-form JSON object (custom fields, props). */
export const AnyObject = Type.Record(Type.String(), Type.Unknown())
/**
 * `[]`, accepted wherever a JSON object (a map) is: PHP's json_encode writes an empty associative array so, and
 * the Ecomail PHP client sends every field that way. Services read it as `{}`.
 */
export const EmptyArray = Type.Array(Type.Unknown(), {
  maxItems: 0,
  description: 'an empty map as PHP encodes it ([]), taken as {}',
})

/**
 * An optional map: null, the map `t`, or `[]` (PHP's empty map, EmptyArray). Null first, so that no other branch
 * coerces it (Ajv tries the branches in order and coerces as it goes).
 */
export const MapOrEmpty = <T extends TSchema>(t: T) => Type.Union([Type.Null(), t, EmptyArray])
