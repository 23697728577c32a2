import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { isUniqueViolation } from '../../core/db/errors.js'
import { tagArguments } from '../../core/mail/merge-tags.js'
import { assignCodes, codesOfMessage, hasFreeCode } from './coupon-assign.repo.js'

/**
 * The `*|COUPON:<folderId>|*` tags of a mail, by folder: each folder with the merge-variable names its tags
 * read (`coupon:12`; `*|COUPON:012|*` reads `coupon:012`). Found once per campaign or transactional batch.
 * A tag whose argument is no folder id is left out: it renders empty, as any unknown tag.
 */
export type CouponTags = Map<number, string[]>

const MAX_ID = 2_147_483_647

export function couponTags(sources: readonly (string | null | undefined)[]): CouponTags {
  const tags: CouponTags = new Map()
  for (const arg of tagArguments(sources, 'COUPON')) {
    if (!/^\d{1,10}$/.test(arg)) continue
    const id = Number(arg)
    if (id < 1 || id > MAX_ID) continue
    const names = tags.get(id) ?? []
    names.push(`coupon:${arg.toLowerCase()}`)
    tags.set(id, names)
  }
  return tags
}

/** Today in UTC as YYYY-MM-DD: a code valid until today is still handed out today. */
export const utcDay = (d: Date) => d.toISOString().slice(0, 10)

type Ctx = Pick<AppContext, 'db' | 'clock' | 'log'>

export interface CouponMail {
  accountId: number
  /** 0 for mail outside a campaign. */
  campaignId: number
  messageIds: number[]
}

/**
 * Hands out the codes a batch of mails needs, one statement per folder whatever the batch size, and returns
 * each mail's merge variables (`coupon:12` → its code; '' when the folder had none left, so a variable the
 * caller supplied can never stand in for a code). A shortfall is logged as a warning and kept in
 * coupon_misses.
 */
export async function assignCouponVars(
  ctx: Ctx,
  tags: CouponTags,
  mail: CouponMail,
): Promise<Map<number, Record<string, string>>> {
  const vars = new Map<number, Record<string, string>>()
  if (tags.size === 0 || mail.messageIds.length === 0) return vars
  for (const id of mail.messageIds) vars.set(id, {})
  const now = ctx.clock.now()
  for (const [folderId, names] of tags) {
    const request = { ...mail, folderId, today: utcDay(now), now }
    let codes
    try {
      codes = await assignCodes(ctx.db, request)
    } catch (err) {
      // The same mail handed to two senders at once (a lease that ran out under a slow one): the other one
      // gave it its code first; asking again returns that code.
      if (!isUniqueViolation(err)) throw err
      codes = await assignCodes(ctx.db, request)
    }
    const byMessage = new Map(codes.map((c) => [c.message_id, c.code]))
    let missed = 0
    for (const id of mail.messageIds) {
      const code = byMessage.get(id)
      if (code === undefined) missed++
      for (const name of names) vars.get(id)![name] = code ?? ''
    }
    if (missed > 0) {
      ctx.log.warn(
        {
          accountId: mail.accountId,
          campaignId: mail.campaignId,
          folderId,
          missed,
          messageIds: mail.messageIds.filter((id) => !byMessage.has(id)).slice(0, 20),
        },
        'coupon folder has no code left: the tag renders empty',
      )
    }
  }
  return vars
}

/** The merge variables of a mail's codes as it was sent (its web version and personal links). */
export async function couponVarsOfMessage(
  ex: Executor,
  tags: CouponTags,
  messageId: number,
): Promise<Record<string, string>> {
  const vars: Record<string, string> = {}
  if (tags.size === 0) return vars
  const codes = new Map((await codesOfMessage(ex, messageId)).map((c) => [c.folder_id, c.code]))
  for (const [folderId, names] of tags) for (const name of names) vars[name] = codes.get(folderId) ?? ''
  return vars
}

/**
 * What a test copy shows for each tag: no real code (a tester who received one could use it, and a
 * subscriber would get it too), but a sample that says where it comes from, when the folder has codes left;
 * empty, as the real mail would be, when it has none.
 */
export async function sampleCouponVars(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  tags: CouponTags,
  accountId: number,
): Promise<Record<string, string>> {
  const vars: Record<string, string> = {}
  const today = utcDay(ctx.clock.now())
  for (const [folderId, names] of tags) {
    const sample = (await hasFreeCode(ctx.db, accountId, folderId, today)) ? `TEST-COUPON-${folderId}` : ''
    for (const name of names) vars[name] = sample
  }
  return vars
}
