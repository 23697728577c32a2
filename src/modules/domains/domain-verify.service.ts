import type { AppContext } from '../../core/context.js'
import { checkRecords, isVerified } from './dns-checks.js'
import { checkDnsServers, createDnsLookup } from './dns-lookup.js'
import { mailHostOf } from './dns-records.js'
import * as repo from './domains.repo.js'
import { forgetSenderDomains } from './sender-domain-cache.js'
import { domainNotFound, lookupName } from './domains.service.js'
import { toDomainObject, type DomainType, type PublicDomainRow } from './domains.schemas.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'config'>

/** Sending first: with no type given, verify answers with the sending variant when the account holds it. */
function preferred(rows: PublicDomainRow[]): PublicDomainRow | undefined {
  return rows.find((r) => r.type === 'sending') ?? rows[0]
}

export function createDomainVerifyService(ctx: Ctx) {
  const servers = ctx.config.dnsServers
  checkDnsServers(servers)
  const mailHost = mailHostOf(ctx.config.publicUrl)
  return {
    /**
     * `POST /domains/{domain}/verify?type=`: looks the records up and stores per-record results. Without a type
     * every variant of the name is checked (they publish the same records). DNS is asked outside any
     * transaction, so a slow resolver never holds a database connection.
     */
    async verify(accountId: number, rawName: string, type: DomainType | undefined) {
      const name = lookupName(rawName)
      const held = await repo.findVariants(ctx.db, accountId, name)
      const targets = type ? held.filter((d) => d.type === type) : held
      if (targets.length === 0) throw domainNotFound()

      const lookup = createDnsLookup(servers)
      const results = await Promise.all(
        targets.map(async (row) => ({ row, checks: await checkRecords(lookup, row, mailHost) })),
      )
      const checkedAt = ctx.clock.now()
      const saved = await retriedTransaction(ctx.db, async (tx) => {
        const out: PublicDomainRow[] = []
        for (const { row, checks } of results) {
          const updated = await repo.saveChecks(tx, row.id, { valid: isVerified(checks), checks, checkedAt })
          if (updated) out.push(updated)
        }
        return out
      })
      forgetSenderDomains(ctx.db)
      // A variant deleted while DNS was being asked is gone; if none is left, neither is the domain.
      const shown = preferred(saved)
      if (!shown) throw domainNotFound()
      return toDomainObject(shown, mailHost)
    },
  }
}
