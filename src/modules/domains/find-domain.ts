import { writesToOutbox } from '../../core/config.js'
import type { AppContext } from '../../core/context.js'
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

/** What mail from one sender address goes out with, and whether it may go out at all. */
export interface SenderDomain {
  /** The account's domain the address belongs to, if it holds one. */
  domain: DomainRow | undefined
  /** The address's domain name (the return path's host comes from it even when the account holds no row). */
  name: string
  /** Verified: the mail is signed with its key. */
  verified: boolean
  /** The mail may go out: the domain is verified, or (outbox mode) nothing leaves the machine anyway. */
  allowed: boolean
  dkim: DkimKey | undefined
}

/** Domains already logged as going out unverified, so the log says it once per process per domain. */
const loggedUnverified = new Set<string>()

/**
 * The one place that decides whether mail from `email` may be sent and how it is signed (campaigns, their test
 * copies and transactional mail all ask here). With SMTP_URL set only a verified domain of the account may
 * send; without it (outbox mode, contract §2) any domain may, its mail unsigned, and the log says so once.
 */
export async function resolveSenderDomain(
  ctx: Pick<AppContext, 'config' | 'log'>,
  ex: Executor,
  accountId: number,
  email: string,
  types: readonly DomainType[],
): Promise<SenderDomain> {
  const domain = await findDomainForAddress(ex, accountId, email, types)
  const name = domain?.name ?? parseDomainName(email.slice(email.lastIndexOf('@') + 1)) ?? 'invalid'
  const verified = domain?.valid === true
  const allowed = verified || writesToOutbox(ctx.config)
  if (allowed && !verified && !loggedUnverified.has(name)) {
    loggedUnverified.add(name)
    ctx.log.warn(
      { domain: name },
      `mail from ${name} goes out unsigned: the domain is not verified, which is allowed only while SMTP_URL is unset (mail is written to DATA_DIR/outbox)`,
    )
  }
  return { domain, name, verified, allowed, dkim: dkimKeyOf(domain) }
}
