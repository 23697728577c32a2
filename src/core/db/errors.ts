/** PostgreSQL error codes the services translate into wire errors. */
export function isUniqueViolation(err: unknown): boolean {
  return pgCode(err) === '23505'
}

function pgCode(err: unknown): string | undefined {
  let e: unknown = err
  // drizzle wraps driver errors in `cause`
  for (let i = 0; i < 3 && e && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string') return code
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}
