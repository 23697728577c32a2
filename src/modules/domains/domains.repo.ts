import { and, asc, DrizzleQueryError, eq, getTableColumns, inArray, sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import type { DomainChecks } from './dns-checks.js'
import type { DomainRow, PublicDomainRow } from './domains.schemas.js'
import { domains, type DomainType } from './domains.table.js'

// The API paths never read the private key, so a future log line or mapper cannot leak what it never had.
const { dkimPrivateKey: _privateKey, ...publicColumns } = getTableColumns(domains)

export type NewDomain = Pick<
  typeof domains.$inferInsert,
  'name' | 'type' | 'dkimSelector' | 'dkimPrivateKey' | 'dkimPublicKey'
>

export async function listDomains(ex: Executor, accountId: number): Promise<PublicDomainRow[]> {
  return ex
    .select(publicColumns)
    .from(domains)
    .where(eq(domains.accountId, accountId))
    .orderBy(asc(domains.name), asc(domains.type))
}

/** The variants (sending, transactional) the account holds of one name, sending first. */
export async function findVariants(
  ex: Executor,
  accountId: number,
  name: string,
  opts: { forUpdate?: boolean } = {},
): Promise<PublicDomainRow[]> {
  const query = ex
    .select(publicColumns)
    .from(domains)
    .where(and(eq(domains.accountId, accountId), eq(domains.name, name)))
    .orderBy(asc(domains.type))
  return opts.forUpdate ? query.for('update') : query
}

/** Full rows, key included: for sharing one key pair between variants and for signing mail. */
export async function findVariantsWithKeys(
  ex: Executor,
  accountId: number,
  name: string,
  types: readonly DomainType[] = ['sending', 'transactional'],
): Promise<DomainRow[]> {
  if (types.length === 0) return []
  return ex
    .select()
    .from(domains)
    .where(and(eq(domains.accountId, accountId), eq(domains.name, name), inArray(domains.type, [...types])))
    .orderBy(asc(domains.type))
}

/**
 * Side effect: takes a transaction-scoped advisory lock on (account, name), so two requests creating the two
 * variants of a name at once cannot each generate a different key pair.
 */
export async function lockDomainName(ex: Executor, accountId: number, name: string): Promise<void> {
  await ex.execute(sql`SELECT pg_advisory_xact_lock(${accountId}::int, hashtext(${name}))`)
}

/** What an insert failure may keep: the SQLSTATE and the server's words, which never quote a text value. */
class DomainInsertError extends Error {
  code?: string
  constraint?: string
  detail?: string
}

/**
 * Drizzle writes a failed query's parameters into its error message and PGlite attaches them to its error, and
 * this query's parameters hold the private key. A failure is rethrown with only the SQLSTATE, constraint and
 * message, so no error log line can carry the key; isUniqueViolation still sees the code.
 */
function withoutParameters(err: unknown): DomainInsertError {
  const driver: unknown = err instanceof DrizzleQueryError && err.cause ? err.cause : err
  const src = (driver && typeof driver === 'object' ? driver : {}) as Record<string, unknown>
  const clean = new DomainInsertError(
    typeof src.message === 'string' ? src.message : 'inserting a domain failed',
  )
  if (typeof src.code === 'string') clean.code = src.code
  if (typeof src.constraint === 'string') clean.constraint = src.constraint
  if (typeof src.detail === 'string') clean.detail = src.detail
  return clean
}

export async function insertDomain(
  ex: Executor,
  accountId: number,
  values: NewDomain,
): Promise<PublicDomainRow> {
  try {
    const [row] = await ex
      .insert(domains)
      .values({ ...values, accountId })
      .returning(publicColumns)
    return row!
  } catch (err) {
    throw withoutParameters(err)
  }
}

export async function saveChecks(
  ex: Executor,
  domainId: number,
  result: { valid: boolean; checks: DomainChecks; checkedAt: Date },
): Promise<PublicDomainRow | undefined> {
  const [row] = await ex
    .update(domains)
    .set({ valid: result.valid, checks: result.checks, checkedAt: result.checkedAt })
    .where(eq(domains.id, domainId))
    .returning(publicColumns)
  return row
}

export async function deleteDomain(ex: Executor, domainId: number): Promise<PublicDomainRow | undefined> {
  const [row] = await ex.delete(domains).where(eq(domains.id, domainId)).returning(publicColumns)
  return row
}

/** Side effect: deletes the account's domain row `id` (of `type`, when given); undefined when there is none. */
export async function deleteOwnDomain(
  ex: Executor,
  accountId: number,
  id: number,
  type: DomainType | undefined,
): Promise<PublicDomainRow | undefined> {
  // Ids past int4 name no row; comparing them would make PostgreSQL fail the query instead.
  if (id < 1 || id > 2_147_483_647) return undefined
  const [row] = await ex
    .delete(domains)
    .where(
      and(eq(domains.accountId, accountId), eq(domains.id, id), type ? eq(domains.type, type) : undefined),
    )
    .returning(publicColumns)
  return row
}
