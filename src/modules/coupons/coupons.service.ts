import type { AppContext } from '../../core/context.js'
import { FieldErrorBag, fieldError, notFound } from '../../core/http/errors.js'
import { parseDay } from '../../core/http/formats.js'
import { flagOn } from '../../core/http/schemas.js'
import { utcDay } from './coupon-vars.js'
import {
  countCodes,
  deleteCodes,
  ensureDefaultFolder,
  findFolder,
  folderExists,
  insertCodes,
  insertFolder,
  listFolders,
} from './coupons.repo.js'
import { toFolderObject, type DeleteInput, type FolderObjectT, type ImportInput } from './coupons.schemas.js'
import { retriedTransaction } from '../../core/db/retry.js'

type Ctx = Pick<AppContext, 'db' | 'clock'>

/** The codes trimmed; a code of only spaces is refused by its place in the array (`codes.3`). */
function trimmedCodes(codes: string[]): string[] {
  const bag = new FieldErrorBag()
  const out = codes.map((c, i) => {
    const code = c.trim()
    if (code === '') bag.add(`codes.${i}`, `The codes.${i} field is required.`)
    return code
  })
  bag.throwIfAny()
  return out
}

/** Discount coupons (contract §7): folders, import and delete of codes. Handing codes out is coupon-vars.ts. */
export function createCouponService(ctx: Ctx) {
  const today = () => utcDay(ctx.clock.now())

  /** The folder a call names, or the account's default one; another account's folder is not found (404). */
  async function folderFor(accountId: number, folderId: number | null | undefined): Promise<number> {
    if (folderId === undefined || folderId === null)
      return ensureDefaultFolder(ctx.db, accountId, ctx.clock.now())
    if (!(await folderExists(ctx.db, accountId, folderId))) throw notFound('Coupon folder not found')
    return folderId
  }

  return {
    async folders(accountId: number): Promise<FolderObjectT[]> {
      await ensureDefaultFolder(ctx.db, accountId, ctx.clock.now())
      return (await listFolders(ctx.db, accountId, today())).map(toFolderObject)
    },

    async createFolder(accountId: number, rawName: string): Promise<FolderObjectT> {
      const name = rawName.trim()
      if (name === '') throw fieldError('name', 'The name field is required.')
      await ensureDefaultFolder(ctx.db, accountId, ctx.clock.now())
      const id = await insertFolder(ctx.db, accountId, name, ctx.clock.now())
      return toFolderObject((await findFolder(ctx.db, accountId, id, today()))!)
    },

    async importCodes(accountId: number, input: ImportInput) {
      const codes = trimmedCodes(input.codes)
      const validUntil = input.valid_until ?? null
      if (validUntil !== null && !parseDay(validUntil))
        throw fieldError('valid_until', 'The valid_until is not a valid date.')
      const update = flagOn(input.update_existing ?? false)
      const folderId = await folderFor(accountId, input.folderId)
      const distinct = [...new Set(codes)]
      return retriedTransaction(ctx.db, async (tx) => {
        const written = await insertCodes(tx, folderId, distinct, validUntil, update, ctx.clock.now())
        const repeated = codes.length - distinct.length
        return {
          // Updated codes were written by this call too, so they count as imported; only codes left as they
          // were count as duplicated.
          imported: written.inserted + written.updated,
          duplicated: repeated + (distinct.length - written.inserted - written.updated),
          totalCount: await countCodes(tx, folderId),
        }
      })
    },

    async deleteCodes(accountId: number, input: DeleteInput) {
      const codes = trimmedCodes(input.codes)
      const folderId = await folderFor(accountId, input.folderId)
      const distinct = [...new Set(codes)]
      const deleted = await deleteCodes(ctx.db, folderId, distinct)
      // Each code counts once, as deleted or as invalid: a code given twice was deleted once, and its second
      // mention names no code the folder lacks (counting it invalid told a shop a code it had was unknown).
      return { deleted, invalid: distinct.length - deleted }
    },
  }
}
