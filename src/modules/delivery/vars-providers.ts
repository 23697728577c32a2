import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { assignCouponVars, couponTags, couponVarsOfMessage, type CouponTags } from '../coupons/index.js'
import { recommendationVars, recommendTags, type RecommendTags } from '../recommenders/index.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'config' | 'log'>

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
  /** What the content asks of this provider (parsed once per content and cached); null or empty: nothing. */
  tags(sources: readonly (string | null | undefined)[]): unknown
  values(ctx: Ctx, tags: unknown, mail: ProvidedMail): Promise<Map<number, Record<string, string>>>
  /** The values one message was given when sent (its web version and click page render it again). */
  given(ex: Executor, tags: unknown, messageId: number): Promise<Record<string, string>>
}

const coupons: VarsProvider = {
  name: 'coupons',
  tags: (sources) => couponTags(sources),
  values: (ctx, tags, mail) => assignCouponVars(ctx, tags as CouponTags, mail),
  given: (ex, tags, messageId) => couponVarsOfMessage(ex, tags as CouponTags, messageId),
}

/**
 * `*|RECOMMEND:<id>:<n>|*`: each recipient's top products, one query per recommender for the batch. The web
 * version and click page of a sent mail render the block empty: recommendations move with every purchase, so
 * they are not stored per message, and a page opened later must not show products picked for a later day.
 */
const recommendations: VarsProvider = {
  name: 'recommendations',
  tags: (sources) => recommendTags(sources),
  values: (ctx, tags, mail) =>
    recommendationVars(ctx, tags as RecommendTags, {
      accountId: mail.accountId,
      recipients: mail.recipients,
    }),
  given: async () => ({}),
}

/** Every provider, applied in this order (a later one's value wins); adding one is one line here. */
export const varsProviders: readonly VarsProvider[] = [coupons, recommendations]

export type ProviderTags = unknown[]

/** The tags of every provider for one content (in `varsProviders` order). */
export const providerTags = (sources: readonly (string | null | undefined)[]): ProviderTags =>
  varsProviders.map((p) => p.tags(sources))

/** Every provider's values for a batch, merged per message. */
export async function providedVars(
  ctx: Ctx,
  tags: ProviderTags,
  mail: ProvidedMail,
): Promise<Map<number, Record<string, string>>> {
  const out = new Map<number, Record<string, string>>()
  for (const [i, p] of varsProviders.entries()) {
    const values = await p.values(ctx, tags[i], mail)
    for (const [id, v] of values) out.set(id, Object.assign(out.get(id) ?? {}, v))
  }
  return out
}

/** Every provider's values as one message was given them. */
export async function givenVars(ex: Executor, tags: ProviderTags, messageId: number) {
  const out: Record<string, string> = {}
  for (const [i, p] of varsProviders.entries()) Object.assign(out, await p.given(ex, tags[i], messageId))
  return out
}
