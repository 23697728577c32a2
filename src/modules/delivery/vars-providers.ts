import type { AppContext } from '../../core/context.js'
import { trackingLinks } from '../../core/mail/tracking-links.js'
import { assignCouponVars, couponTags, couponVarsOfMessage, type CouponTags } from '../coupons/index.js'
import { recommendationVars, recommendTags, type RecommendTags } from '../recommenders/index.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'config' | 'log' | 'linkSecret'>

/** Which mail a batch of messages belongs to, as a provider's values depend on it. */
export interface ProvidedMail {
  accountId: number
  /** 0 for mail that is no campaign's. */
  campaignId: number
  messageIds: number[]
  /** The same messages with their addresses (providers that depend on the person). */
  recipients: { messageId: number; email: string }[]
}

/**
 * Per-recipient merge values computed for a whole claimed batch at once (one statement per batch, not per
 * message), before rendering: coupon codes today, product recommendations next.
 */
export interface VarsProvider {
  name: string
  /**
   * Whether a campaign's test copy gets this provider's real values (recommendations: what the addressee
   * would see) or the sample fixed when the copy was queued (coupons: a test hands out no code).
   */
  inTestCopies: boolean
  /** What the content asks of this provider (parsed once per content and cached); null or empty: nothing. */
  tags(sources: readonly (string | null | undefined)[]): unknown
  values(ctx: Ctx, tags: unknown, mail: ProvidedMail): Promise<Map<number, Record<string, string>>>
  /**
   * The values one message shows when rendered again after sending: for its web version (`page`) or to find
   * its click targets (`links`).
   */
  given(ctx: GivenCtx, tags: unknown, message: GivenMessage, use: GivenUse): Promise<Record<string, string>>
}

/** What rendering a sent message again may read. */
export type GivenCtx = Pick<AppContext, 'db' | 'config' | 'linkSecret'>
/** A sent message (or, with id 0 and email '', the campaign's public web version for nobody). */
export interface GivenMessage {
  id: number
  accountId: number
  email: string
}
export type GivenUse = 'page' | 'links'

const coupons: VarsProvider = {
  name: 'coupons',
  inTestCopies: false,
  tags: (sources) => couponTags(sources),
  values: (ctx, tags, mail) => assignCouponVars(ctx, tags as CouponTags, mail),
  given: (ctx, tags, message) => couponVarsOfMessage(ctx.db, tags as CouponTags, message.id),
}

/**
 * `*|RECOMMEND:<id>:<n>|*`: each recipient's top products, one query per recommender for the batch. They are
 * not stored per message (they move with every purchase): the web version shows the recipient's products as
 * they are when it is opened (bestsellers for nobody in particular), and finding a click target needs none.
 */
const recommendations: VarsProvider = {
  name: 'recommendations',
  inTestCopies: true,
  tags: (sources) => recommendTags(sources),
  values: (ctx, tags, mail) =>
    recommendationVars(ctx, tags as RecommendTags, {
      accountId: mail.accountId,
      recipients: mail.recipients,
      track: trackingLinks(ctx).clickTo,
    }),
  given: async (ctx, tags, message, use) => {
    if (use === 'links') return {}
    const vars = await recommendationVars(ctx, tags as RecommendTags, {
      accountId: message.accountId,
      recipients: [{ messageId: message.id, email: message.email }],
      track: trackingLinks(ctx).clickTo,
    })
    return vars.get(message.id) ?? {}
  },
}

/** Every provider, applied in this order (a later one's value wins); adding one is one line here. */
export const varsProviders: readonly VarsProvider[] = [coupons, recommendations]

export type ProviderTags = unknown[]

/** The tags of every provider for one content (in `varsProviders` order). */
export const providerTags = (sources: readonly (string | null | undefined)[]): ProviderTags =>
  varsProviders.map((p) => p.tags(sources))

/** Every provider's values for a batch, merged per message (for test copies, only those `inTestCopies`). */
export async function providedVars(
  ctx: Ctx,
  tags: ProviderTags,
  mail: ProvidedMail,
  opts: { testCopies?: boolean } = {},
): Promise<Map<number, Record<string, string>>> {
  const out = new Map<number, Record<string, string>>()
  for (const [i, p] of varsProviders.entries()) {
    if (opts.testCopies && !p.inTestCopies) continue
    const values = await p.values(ctx, tags[i], mail)
    for (const [id, v] of values) out.set(id, Object.assign(out.get(id) ?? {}, v))
  }
  return out
}

/** Every provider's values for one sent message rendered again (see VarsProvider.given). */
export async function givenVars(ctx: GivenCtx, tags: ProviderTags, message: GivenMessage, use: GivenUse) {
  const out: Record<string, string> = {}
  for (const [i, p] of varsProviders.entries()) Object.assign(out, await p.given(ctx, tags[i], message, use))
  return out
}
