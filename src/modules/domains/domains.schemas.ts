import { Type, type Static } from '@sinclair/typebox'
import { readChecks } from './dns-checks.js'
import { recordsFor } from './dns-records.js'
import type { domains } from './domains.table.js'

export type { DomainType } from './domains.table.js'
export type DomainRow = typeof domains.$inferSelect
/** A domain as the API paths read it: everything but the private key. */
export type PublicDomainRow = Omit<DomainRow, 'dkimPrivateKey'>

export const DomainTypeSchema = Type.Union([Type.Literal('sending'), Type.Literal('transactional')])

export const CreateDomainBody = Type.Object({
  name: Type.String({ maxLength: 1000, description: 'domain name; case and a trailing dot are ignored' }),
  type: Type.Optional(DomainTypeSchema),
})
export type CreateDomainInput = Static<typeof CreateDomainBody>

export const DomainParams = Type.Object({ domain: Type.String({ description: 'domain name' }) })

/** DELETE also takes the domain's `id` (ecomail-php deletes by id); a name is never all digits. */
export const DomainOrIdParams = Type.Object({
  domain: Type.String({ description: 'domain name, or the numeric `id` of one variant' }),
})

/**
 * `?type=` of verify and delete. An empty value counts as absent, as Ecomail's (Laravel) validation treats it,
 * so a client that always sends the parameter keeps working.
 */
export const DomainTypeQuery = Type.Object({
  type: Type.Optional(Type.Union([DomainTypeSchema, Type.Literal('')])),
})

export const DnsRecord = Type.Object({
  type: Type.Union([Type.Literal('TXT'), Type.Literal('MX')]),
  host: Type.String(),
  value: Type.String(),
  priority: Type.Optional(Type.Integer({ description: 'MX preference' })),
  valid: Type.Optional(
    Type.Boolean({ description: 'found at the last verification; absent before the first' }),
  ),
})

export const DomainObject = Type.Object({
  id: Type.Integer({ description: 'of this variant; DELETE /domains/{id} takes it' }),
  name: Type.String(),
  type: DomainTypeSchema,
  valid: Type.Boolean(),
  blocked: Type.Boolean(),
  dns: Type.Array(DnsRecord, { description: 'records to publish: DKIM, SPF, DMARC and the bounce MX' }),
})
export type DomainObjectT = Static<typeof DomainObject>

/** `DELETE /domains/{domain}` answers with the deleted variant (api.md: name, valid, blocked). */
export const DeletedDomain = Type.Object({
  name: Type.String(),
  valid: Type.Boolean(),
  blocked: Type.Boolean(),
})

/** api.md's `{error, domain}`: the account holds both variants and the request did not say which. */
export const DomainConflict = Type.Object({ error: Type.String(), domain: Type.String() })

export function toDomainObject(row: PublicDomainRow, mailHost: string): DomainObjectT {
  const checks = readChecks(row.checks)
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    valid: row.valid,
    blocked: row.blocked,
    dns: recordsFor(row, mailHost).map(({ key, ...record }) => {
      const check = checks[key]
      return check ? { ...record, valid: check.valid } : record
    }),
  }
}

export function toDeletedDomain(row: PublicDomainRow): Static<typeof DeletedDomain> {
  return { name: row.name, valid: row.valid, blocked: row.blocked }
}
