import { Type, type TSchema } from '@sinclair/typebox'

/** Shared TypeBox pieces for the contract's error shapes and common parameters. */
export const MessageError = Type.Object({ message: Type.String() }, { $id: 'MessageError' })
export const FieldErrorsBody = Type.Object(
  { errors: Type.Record(Type.String(), Type.Array(Type.String())) },
  { $id: 'FieldErrors' },
)
export const ErrorList = Type.Object({ errors: Type.Array(Type.String()) }, { $id: 'ErrorList' })
export const ErrorString = Type.Object({ errors: Type.String() }, { $id: 'ErrorString' })

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

/** Error responses every authenticated route can give. */
export const commonErrors = {
  401: MessageError,
  404: MessageError,
  413: MessageError,
  422: FieldErrorsBody,
  429: MessageError,
  500: MessageError,
} as const

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
