import type { Executor } from '../../core/db/client.js'
import type { DkimKey } from '../../core/mail/mailer.js'
import { parseDomainName } from './domain-name.js'
import { findVariantsWithKeys } from './domains.repo.js'
import type { DomainRow, DomainType } from './domains.schemas.js'

/**
 * The account's domain a sender address belongs to (exact domain part, no parent-domain match), key included,
 * for DKIM signing and the VERP return path. Among the variants allowed by `types`, a verified one wins; between
 * equals, the order of `types` decides. Undefined when the account holds none.
 */
export async function findDomainForAddress(
  ex: Executor,
  accountId: number,
  email: string,
  types: readonly DomainType[],
): Promise<DomainRow | undefined> {
  const at = email.lastIndexOf('@')
  if (at < 0) return undefined
  const name = parseDomainName(email.slice(at + 1))
  if (!name) return undefined
  const rows = await findVariantsWithKeys(ex, accountId, name, types)
  const rank = (d: DomainRow) => (d.valid ? 0 : types.length) + types.indexOf(d.type)
  return rows.sort((a, b) => rank(a) - rank(b))[0]
}

/**
 * The key mail from this domain is signed with; undefined unless the domain is verified (an unpublished key
 * would only make the signature fail, so such mail goes unsigned).
 */
export function dkimKeyOf(domain: DomainRow | undefined): DkimKey | undefined {
  return domain?.valid === true
    ? { domainName: domain.name, keySelector: domain.dkimSelector, privateKey: domain.dkimPrivateKey }
    : undefined
}
