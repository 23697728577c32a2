import type { AppContext } from '../../core/context.js'
import { notFound } from '../../core/http/errors.js'
import { trackingLinks, withOpenPixel } from '../../core/mail/tracking-links.js'
import { verpAddress } from '../../core/mail/verp.js'
import { bounceHostFor, dkimKeyOf, findDomainForAddress } from '../domains/index.js'
import { confirmUrl, readConfirmToken } from './confirmation.links.js'
import { composeConfirmationMail } from './confirmation.mail.js'
import * as repo from './confirmation.repo.js'
import { emitSignal } from '../signals/index.js'

type Ctx = Pick<AppContext, 'db' | 'clock' | 'config' | 'mailer' | 'linkSecret' | 'log'>

export interface ConfirmOutcome {
  /** True when this request moved the membership from 6 to 1 (not on a repeat click). */
  confirmed: boolean
  /** Where to send the browser: the list's sub_confirmed_page when it is an http(s) URL. */
  redirectTo: string | null
}

const CONFIRMATION_DOMAIN_TYPES = ['sending', 'transactional'] as const

export function createConfirmationService(ctx: Ctx) {
  return {
    /** Sends the confirmation mail while the membership is still unconfirmed; says whether it did. */
    async sendMail(p: repo.PendingConfirmation): Promise<'sent' | 'skipped'> {
      const recipient = await repo.findUnconfirmedRecipient(ctx.db, p)
      if (!recipient) return 'skipped'
      const link = confirmUrl(ctx.config.publicUrl, ctx.linkSecret, p)
      const mail = composeConfirmationMail({ ...recipient, link, fallbackFrom: ctx.config.mailFrom })
      // Signed when the sender's address is on a verified domain of the account.
      const domain = await findDomainForAddress(
        ctx.db,
        p.accountId,
        mail.from.address,
        CONFIRMATION_DOMAIN_TYPES,
      )
      const to = mail.to[0]!.address
      const messageId = await repo.insertConfirmationMessage(
        ctx.db,
        { accountId: p.accountId, contactId: p.contactId, email: to, subject: mail.subject },
        ctx.clock.now(),
      )
      // A VERP return path naming the message, as all other mail has, so a bounce or complaint counts.
      const from = mail.from.address
      const bounceDomain = bounceHostFor(domain?.name ?? from.slice(from.lastIndexOf('@') + 1))
      const returnPath = verpAddress(ctx.linkSecret, `m${messageId}`, bounceDomain)
      // An open pixel as on transactional mail, so the double opt-in statistics see opens.
      const html = mail.html && withOpenPixel(mail.html, trackingLinks(ctx).open(messageId))
      let smtpMessageId: string
      try {
        const sent = await ctx.mailer.send({ ...mail, html, returnPath, dkim: dkimKeyOf(domain) })
        smtpMessageId = sent.messageId
      } catch (err) {
        await repo.deleteConfirmationMessage(ctx.db, messageId)
        throw err
      }
      await repo.markConfirmationSent(ctx.db, messageId, smtpMessageId, ctx.clock.now())
      return 'sent'
    },

    /**
     * A click on the link. Anything but a genuine token is a plain 404, so the route tells nothing about
     * lists or people; a genuine one always ends on the confirmed page, whatever the membership's status.
     */
    async confirm(token: string): Promise<ConfirmOutcome> {
      const target = readConfirmToken(ctx.linkSecret, token)
      if (!target) throw notFound()
      const now = ctx.clock.now()
      // The list's subscribe-triggered automations start from the signal, committed with the confirmation.
      const confirmed = await ctx.db.transaction(async (tx) => {
        const done = await repo.confirmMembership(tx, target, now)
        if (done)
          await emitSignal(tx, {
            accountId: done.accountId,
            kind: 'subscribe',
            email: done.email,
            payload: { list_id: target.listId },
            at: now,
          })
        return done !== undefined
      })
      if (confirmed) ctx.log.info({ listId: target.listId }, 'subscription confirmed')
      return { confirmed, redirectTo: redirectTarget(await repo.findConfirmedPage(ctx.db, target.listId)) }
    },
  }
}

/** Only absolute http(s) URLs become a Location; `href` also drops any CR/LF the stored text may hold. */
function redirectTarget(page: string | undefined): string | null {
  if (!page?.trim()) return null
  try {
    const url = new URL(page.trim())
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null
  } catch {
    return null
  }
}
