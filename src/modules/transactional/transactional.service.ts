import type { AppContext } from '../../core/context.js'
import type { AuthAccount } from '../../core/http/auth.js'
import { fieldError, planRestricted } from '../../core/http/errors.js'
import { inlineCss } from '../../core/mail/inline-css.js'
import { resolveSenderDomainCached } from '../domains/index.js'
import { BODY_DOMAIN_TYPES } from '../delivery/index.js'
import { requireTemplate } from '../templates/index.js'
import { createTransactionalIntake } from './transactional.intake.js'
import type { MessageInput, SendResultsT, SendTemplateInput } from './transactional.schemas.js'
import { prepareMessage } from './transactional.validate.js'

type Ctx = Pick<AppContext, 'db' | 'dbHandle' | 'clock' | 'config' | 'log' | 'erasureSecret'>

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

/**
 * The intake of a transactional call: validate, check the sender domain (cached for a second, see
 * resolveSenderDomainCached), then queue the body row and one ledger (`messages`) row per accepted recipient
 * together with the calls that arrived at the same time (transactional.intake.ts: one suppression lookup and
 * one insert statement for all of them), and wake the sender. Rendering and SMTP happen in the sender, so the
 * API answers as soon as the rows commit.
 * Rejected recipients (invalid or suppressed addresses) are counted and get no row at all: nothing is queued
 * for them, and the email log has nothing to show since nothing was sent.
 */
export function createTransactionalService(ctx: Ctx) {
  const intake = createTransactionalIntake(ctx)

  async function send(account: AuthAccount, input: MessageInput, templateId: number | null) {
    const prepared = prepareMessage(input)
    const domain = await resolveSenderDomainCached(ctx, account.id, prepared.fromEmail, BODY_DOMAIN_TYPES)
    if (!domain.allowed || domain.domain?.blocked) {
      throw fieldError('message.from_email', 'The from_email must be an address of a verified domain.')
    }
    // Inlined once per call rather than per recipient, and before the intake holds a connection.
    const html = prepared.html === undefined ? null : inlineCssCached(prepared.html)
    const queued = await intake({ accountId: account.id, templateId, prepared, html })
    const results: SendResultsT['results'] = {
      total_rejected_recipients: queued.rejected,
      total_accepted_recipients: queued.accepted,
      id: queued.bodyId,
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
