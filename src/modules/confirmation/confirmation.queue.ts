import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { queueMail } from '../delivery/index.js'
import { contactMergeText } from '../messages/index.js'
import { confirmUrl } from './confirmation.links.js'
import { composeConfirmationMail } from './confirmation.mail.js'
import { findUnconfirmedRecipient, type PendingConfirmation } from './confirmation.repo.js'

/** The merge tag that stands for the recipient's own confirm link in the queued body. */
const LINK_TAG = '*|CONFIRM_LINK|*'

/**
 * Queues the confirmation mail inside the caller's transaction (a body row and a ledger row, kind
 * `confirmation`): it exists exactly when the unconfirmed subscription commits, and vanishes with it on a
 * rollback. The one sender sends it like all other mail (VERP, open pixel, `send` event); the link is the
 * recipient's merge value, so the body holds none. The person's fields and custom fields are merge values too:
 * `conf_subject` and `conf_message` take the merge tags of any mail (contract §7), `*|name|*` included.
 * True when it queued one: the caller wakes the senders once it has committed (wakeSenders).
 */
export async function queueConfirmationMail(
  ctx: Pick<AppContext, 'clock' | 'config' | 'linkSecret'>,
  tx: Executor,
  p: PendingConfirmation,
): Promise<boolean> {
  const recipient = await findUnconfirmedRecipient(tx, p)
  if (!recipient) return false
  const link = confirmUrl(ctx.config.publicUrl, ctx.linkSecret, p)
  const mail = composeConfirmationMail({ ...recipient, link: LINK_TAG, fallbackFrom: ctx.config.mailFrom })
  const to = mail.to[0]!
  await queueMail(
    tx,
    {
      accountId: p.accountId,
      fromName: mail.from.name ?? '',
      fromEmail: mail.from.address,
      replyTo: mail.replyTo ?? null,
      subject: mail.subject,
      html: mail.html ?? null,
      text: mail.text ?? null,
      // An open pixel as on transactional mail, so the double opt-in statistics see opens; the link is no
      // tracked click (it is the confirmation itself).
      trackOpens: true,
      trackClicks: false,
      marketing: false,
    },
    [
      {
        email: to.address,
        name: to.name ?? '',
        contactId: p.contactId,
        vars: { ...contactMergeText(recipient.contact), confirm_link: link },
      },
    ],
    { kind: 'confirmation' },
    ctx.clock.now(),
  )
  return true
}
