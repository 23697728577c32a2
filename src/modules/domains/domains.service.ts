import type { AppContext } from '../../core/context.js'
import { isUniqueViolation } from '../../core/db/errors.js'
import { conflict, fieldError, notFound } from '../../core/http/errors.js'
import { generateDkimKeys, type DkimKeys } from './dkim-keys.js'
import { isBlankName, parseDomainName } from './domain-name.js'
import { mailHostOf } from './dns-records.js'
import * as repo from './domains.repo.js'
import { forgetSenderDomains } from './sender-domain-cache.js'
import {
  toDeletedDomain,
  toDomainObject,
  type CreateDomainInput,
  type DomainRow,
  type DomainType,
} from './domains.schemas.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'config'>

const nameTaken = () => fieldError('name', 'The name has already been taken.')
export const domainNotFound = () => notFound('Domain not found')

/** A name from a path: held names are stored canonical, so one that cannot be canonical is simply not held. */
export function lookupName(raw: string): string {
  const name = parseDomainName(raw)
  if (!name) throw domainNotFound()
  return name
}

/** `?type=` with an empty value means no type (domains.schemas.ts). */
export function queryType(type: DomainType | '' | undefined): DomainType | undefined {
  return type === '' ? undefined : type
}

function keysOf(row: DomainRow): DkimKeys {
  return { selector: row.dkimSelector, privateKey: row.dkimPrivateKey, publicKey: row.dkimPublicKey }
}

export function createDomainService(ctx: Ctx) {
  const mailHost = mailHostOf(ctx.config.publicUrl)
  return {
    async create(accountId: number, input: CreateDomainInput) {
      if (isBlankName(input.name)) throw fieldError('name', 'The name field is required.')
      const name = parseDomainName(input.name)
      if (!name) throw fieldError('name', 'The name must be a valid domain name.')
      const type: DomainType = input.type ?? 'sending'

      // Both variants of a name publish the same records: the second one takes the first one's keys. Keys are
      // made before the transaction, so no connection waits on RSA generation (unless the sibling seen here is
      // deleted meanwhile, a race rare enough to pay for inside).
      const held = await repo.findVariantsWithKeys(ctx.db, accountId, name)
      if (held.some((d) => d.type === type)) throw nameTaken()
      const fresh = held.length > 0 ? undefined : await generateDkimKeys(ctx.clock.now())

      try {
        const row = await retriedTransaction(ctx.db, async (tx) => {
          await repo.lockDomainName(tx, accountId, name)
          const now = await repo.findVariantsWithKeys(tx, accountId, name)
          if (now.some((d) => d.type === type)) throw nameTaken()
          const sibling = now[0]
          const keys = sibling ? keysOf(sibling) : (fresh ?? (await generateDkimKeys(ctx.clock.now())))
          return repo.insertDomain(tx, accountId, {
            name,
            type,
            dkimSelector: keys.selector,
            dkimPrivateKey: keys.privateKey,
            dkimPublicKey: keys.publicKey,
          })
        })
        return toDomainObject(row, mailHost)
      } catch (err) {
        if (isUniqueViolation(err)) throw nameTaken()
        throw err
      }
    },

    async all(accountId: number) {
      return (await repo.listDomains(ctx.db, accountId)).map((row) => toDomainObject(row, mailHost))
    },

    /**
     * api.md, DELETE /domains/{domain}: without `type`, only an unambiguous name is deleted. A path of digits
     * is the id of one variant (ecomail-php deletes by id): no domain name is all digits (its top label
     * cannot be), so the two never meet.
     */
    async remove(accountId: number, rawName: string, type: DomainType | undefined) {
      if (/^\d{1,18}$/.test(rawName)) return this.removeById(accountId, Number(rawName), type)
      const name = lookupName(rawName)
      const deleted = await retriedTransaction(ctx.db, async (tx) => {
        const held = await repo.findVariants(tx, accountId, name, { forUpdate: true })
        const targets = type ? held.filter((d) => d.type === type) : held
        if (targets.length === 0) throw domainNotFound()
        if (targets.length > 1) {
          throw conflict({
            error: 'The domain is held as both a sending and a transactional domain; choose one with type.',
            domain: name,
          })
        }
        return repo.deleteDomain(tx, targets[0]!.id)
      })
      forgetSenderDomains(ctx.db)
      if (!deleted) throw domainNotFound()
      return toDeletedDomain(deleted)
    },

    /** One variant by its id; another account's id, or a `type` the variant is not, is a 404. */
    async removeById(accountId: number, id: number, type: DomainType | undefined) {
      const deleted = await repo.deleteOwnDomain(ctx.db, accountId, id, type)
      forgetSenderDomains(ctx.db)
      if (!deleted) throw domainNotFound()
      return toDeletedDomain(deleted)
    },
  }
}
