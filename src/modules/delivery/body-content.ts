import type { AppContext } from '../../core/context.js'
import type { MergeValue } from '../../core/mail/merge-tags.js'
import { bounceHostFor, resolveSenderDomain, type DomainType, type SenderDomain } from '../domains/index.js'
import type { BodyContent, BodyRecipient } from './body-render.js'
import type { BodyRow } from './bodies.repo.js'

/** Contract §2: a verified transactional domain, or else a verified sending domain, signs transactional mail. */
export const BODY_DOMAIN_TYPES: readonly DomainType[] = ['transactional', 'sending']

/**
 * Contract §4: campaign mail, and so a campaign's test copies, is signed with a verified sending domain of its
 * From address (in outbox mode an unverified one will do, see resolveSenderDomain).
 */
export const CAMPAIGN_DOMAIN_TYPES: readonly DomainType[] = ['sending']

/** How long a sender trusts a domain lookup: a batch a second would otherwise read the domain each time. */
const DOMAIN_TTL_MS = 1000
const DOMAIN_CACHE_SIZE = 500

type Ctx = Pick<AppContext, 'db' | 'clock' | 'config' | 'linkSecret' | 'log'>

/** Per database (tests run several apps in one process), by account and address. */
const cache = new WeakMap<object, Map<string, { at: number; domain: SenderDomain }>>()

/** The domain mail from `fromEmail` is signed with, among the `types` its kind of mail may use (cached briefly). */
export async function senderDomainOf(
  ctx: Ctx,
  accountId: number,
  fromEmail: string,
  types: readonly DomainType[] = BODY_DOMAIN_TYPES,
): Promise<SenderDomain> {
  let domains = cache.get(ctx.db)
  if (!domains) cache.set(ctx.db, (domains = new Map()))
  const key = `${types.join(',')}|${accountId}|${fromEmail.toLowerCase()}`
  // Wall time, not ctx.clock: this is a cache, not a rule of the domain.
  const now = performance.now()
  const hit = domains.get(key)
  if (hit && now - hit.at < DOMAIN_TTL_MS) return hit.domain
  const domain = await resolveSenderDomain(ctx, ctx.db, accountId, fromEmail, types)
  // Only a verified domain is kept: one verified a moment ago signs the next mail at once.
  if (!domain.verified) return domain
  if (domains.size >= DOMAIN_CACHE_SIZE) domains.delete(domains.keys().next().value!)
  domains.set(key, { at: now, domain })
  return domain
}

/** The texts of a body that may hold merge tags: where its coupon and recommendation tags are looked for. */
export const bodyTemplates = (body: Pick<BodyRow, 'subject' | 'html' | 'text' | 'ampHtml'>) => [
  body.subject,
  body.html,
  body.text,
  body.ampHtml,
]

/**
 * What a body's mail is sent with. The intake checked the domain; if it lost its verification since (or in
 * outbox mode), the mail goes unsigned.
 */
export async function bodyContent(ctx: Ctx, body: BodyRow): Promise<BodyContent> {
  const domain = await senderDomainOf(ctx, body.accountId, body.fromEmail)
  return {
    bodyId: body.id,
    subject: body.subject,
    fromName: body.fromName,
    fromEmail: body.fromEmail,
    replyTo: body.replyTo,
    html: body.html,
    text: body.text,
    ampHtml: body.ampHtml,
    attachments: body.attachments,
    marketing: body.marketing,
    bounceDomain: bounceHostFor(domain.name),
    dkim: domain.dkim,
    publicUrl: ctx.config.publicUrl,
    linkSecret: ctx.linkSecret,
  }
}

/**
 * One recipient of a body: global values, overridden by the recipient's own (names lower-cased at intake),
 * then the reserved ones and the provided ones (coupon codes), which no merge_vars entry can replace. `name`
 * given by neither is the recipient's `to[].name`: templates written for Ecomail greet `*|NAME|*`, which it
 * fills itself. No prototype: `*|constructor|*` must render empty.
 */
export function bodyRecipient(
  body: Pick<BodyRow, 'globalVars' | 'copies' | 'trackOpens' | 'trackClicks'>,
  m: { id: number; email: string; recipientName: string; vars: Record<string, string> | null },
  provided: Record<string, string> | undefined,
): BodyRecipient {
  const vars = Object.assign(Object.create(null) as Record<string, MergeValue>, body.globalVars, m.vars)
  vars.email = m.email
  vars['address.email'] = m.email
  vars['address.name'] = m.recipientName
  if (vars.name === undefined && m.recipientName !== '') vars.name = m.recipientName
  vars.email_id = String(m.id)
  if (provided) Object.assign(vars, provided)
  const copies = body.copies[m.email]
  return {
    messageId: m.id,
    email: m.email,
    name: m.recipientName,
    vars,
    cc: copies?.cc ?? [],
    bcc: copies?.bcc ?? [],
    ccNames: copies?.names,
    trackOpens: body.trackOpens,
    trackClicks: body.trackClicks,
  }
}
