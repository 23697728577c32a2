/**
 * Errors the services throw; the single error handler in app.ts writes them in the contract's shapes (§1).
 * Services never build HTTP replies themselves.
 */
export class HttpError extends Error {
  constructor(
    public readonly statusCode: number,
    public readonly body: Record<string, unknown>,
    public readonly headers: Record<string, string> = {},
  ) {
    super(typeof body.message === 'string' ? body.message : `HTTP ${statusCode}`)
  }
}

export type FieldErrors = Record<string, string[]>

/** Unknown route or record, or another account's record: `{message}`. */
export const notFound = (message = 'Not Found') => new HttpError(404, { message })
/** A subscriber absent from a list: `{errors:[...]}`. */
export const subscriberNotInList = (message = 'Subscriber not found in this list') =>
  new HttpError(404, { errors: [message] })
/** 422 `{errors:{field:[...]}}`; the bulk subscriber update passes 400. */
export const validationFailed = (errors: FieldErrors, status = 422) => new HttpError(status, { errors })
export const fieldError = (field: string, message: string, status = 422) =>
  validationFailed({ [field]: [message] }, status)
export const planRestricted = (message: string) => new HttpError(403, { errors: message })
export const unauthorized = () => new HttpError(401, { message: 'Unauthorized' })
export const conflict = (body: Record<string, unknown>) => new HttpError(409, body)

/** Collects field errors so a service can report every bad field at once. */
export class FieldErrorBag {
  readonly errors: FieldErrors = {}
  add(field: string, message: string): void {
    ;(this.errors[field] ??= []).push(message)
  }
  get empty(): boolean {
    return Object.keys(this.errors).length === 0
  }
  throwIfAny(status = 422): void {
    if (!this.empty) throw validationFailed(this.errors, status)
  }
}
