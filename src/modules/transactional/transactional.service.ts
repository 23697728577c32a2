import type { AppContext } from '../../core/context.js'
import type { AuthAccount } from '../../core/http/auth.js'
import { fieldError, planRestricted } from '../../core/http/errors.js'
import { inlineCss } from '../../core/mail/inline-css.js'
import { resolveSenderDomain } from '../domains/index.js'
import { BODY_DOMAIN_TYPES, queueMail, wakeSenders } from '../delivery/index.js'
import { suppressedAddresses } from '../subscribers/index.js'
import { requireTemplate } from '../templates/index.js'
import type { MessageInput, SendResultsT, SendTemplateInput } from './transactional.schemas.js'
import { prepareMessage, type PreparedMessage } from './transactional.validate.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'config' | 'log' | 'erasureSecret'>

/** Shops send the same few templates over and over: CSS inlining (juice) is the costliest step of the intake. */
const INLINED_CACHE_SIZE = 64
const inlined = new Map<string, string>()

function inlineCssCached(html: string): string {
  const hit = inlined.get(html)
  if (hit !== undefined) return hit
  const out = inlineCss(html)
  if (inlined.size >= INLINED_CACHE_SIZE) inlined.delete(inlined.keys().next().value!)
  inlined.set(html, out)
  return out
}

export function requirePlan(account: AuthAccount): void {
  // Contract §2: transactional mail is for the paid and marketer plans.
  if (account.plan === 'free')
    throw planRestricted('Transactional emails are not available on the free plan.')
}

/** cc and bcc of the accepted recipients only, without suppressed addresses (they would bounce or complain). */
function liveCopies(p: PreparedMessage, accepted: Set<string>, suppressed: Set<string>) {
  const out: PreparedMessage['copies'] = {}
  for (const [to, c] of Object.entries(p.copies)) {
    if (!accepted.has(to)) continue
    out[to] = { cc: c.cc.filter((a) => !suppressed.has(a)), bcc: c.bcc.filter((a) => !suppressed.has(a)) }
  }
  return out
}

/**
 * The intake of a transactional call: validate, then one statement that writes the body row and one ledger
 * (`messages`) row per accepted recipient, and wake the sender. Rendering and SMTP happen in the sender, so
 * the API answers as soon as the rows commit.
 * Rejected recipients (invalid or suppressed addresses) are counted and get no row at all: nothing is queued
 * for them, and the email log has nothing to show since nothing was sent.
 */
export function createTransactionalService(ctx: Ctx) {
  async function send(account: AuthAccount, input: MessageInput, templateId: number | null) {
    const p = prepareMessage(input)
    const copies = Object.values(p.copies).flatMap((c) => [...c.cc, ...c.bcc])
    const [domain, suppressed] = await Promise.all([
      resolveSenderDomain(ctx, ctx.db, account.id, p.fromEmail, BODY_DOMAIN_TYPES),
      suppressedAddresses(ctx.db, ctx.erasureSecret, account.id, [
        ...p.recipients.map((r) => r.email),
        ...copies,
      ]),
    ])
    if (!domain.allowed || domain.domain?.blocked) {
      throw fieldError('message.from_email', 'The from_email must be an address of a verified domain.')
    }
    const accepted = p.recipients.filter((r) => !suppressed.has(r.email))
    // Inlined once per call rather than per recipient, and before the transaction holds a connection.
    const html = p.html === undefined ? null : inlineCssCached(p.html)
    // One statement (body and ledger rows together): atomic without a transaction of its own.
    const { bodyId: batchId } = await queueMail(
      ctx.db,
      {
        accountId: account.id,
        templateId,
        fromName: p.fromName,
        fromEmail: p.fromEmail,
        replyTo: p.replyTo ?? null,
        subject: p.subject,
        html,
        text: p.text ?? null,
        globalVars: p.globalVars,
        copies: liveCopies(p, new Set(accepted.map((r) => r.email)), suppressed),
        attachments: p.attachments,
        trackOpens: p.trackOpens,
        trackClicks: p.trackClicks,
        marketing: false,
      },
      accepted.map((r) => ({
        email: r.email,
        name: r.name,
        contactId: null,
        vars: p.varsByRecipient.get(r.email) ?? null,
      })),
      { kind: 'transactional' },
      ctx.clock.now(),
    )
    if (accepted.length) wakeSenders()
    const results: SendResultsT['results'] = {
      total_rejected_recipients: p.invalid + (p.recipients.length - accepted.length),
      total_accepted_recipients: accepted.length,
      id: batchId,
    }
    return { results }
  }

  return {
    async sendMessage(account: AuthAccount, input: MessageInput) {
      requirePlan(account)
      return send(account, input, null)
    },
    async sendTemplate(account: AuthAccount, input: SendTemplateInput) {
      requirePlan(account)
      const template = await requireTemplate(ctx, account.id, input.template_id)
      const { template_id: _templateId, ...rest } = input
      const subject = input.subject || template.subject
      return send(account, { ...rest, subject, html: template.html }, template.id)
    },
  }
}

export type TransactionalService = ReturnType<typeof createTransactionalService>
