import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { inlineCss } from '../../core/mail/inline-css.js'
import { queueMail } from '../delivery/index.js'

/**
 * The engine's one road to the send ledger: the shared `queueMail` of the delivery module writes the body row
 * and one ledger row per recipient (kind 'automation', pipeline_id, action_id = node id, contact_id) in the
 * caller's transaction, so a node's mail exists exactly when its log entry and the run's move commit. The one
 * sender finds it on its next poll.
 */
export interface AutomationMail {
  accountId: number
  pipelineId: number
  actionId: string
  body: {
    fromName: string
    fromEmail: string
    replyTo: string | null
    subject: string
    html: string | null
    text: string | null
  }
  recipients: { email: string; name: string; contactId: number | null; vars: Record<string, string> }[]
}

/** Side effect: queues the mail in `tx`; the message ids, one per recipient in the order given. */
export async function queueAutomationMail(
  ctx: Pick<AppContext, 'clock'>,
  tx: Executor,
  m: AutomationMail,
): Promise<number[]> {
  if (m.recipients.length === 0) return []
  const { messageIds } = await queueMail(
    tx,
    {
      accountId: m.accountId,
      fromName: m.body.fromName,
      fromEmail: m.body.fromEmail,
      replyTo: m.body.replyTo,
      subject: m.body.subject,
      html: m.body.html === null ? null : inlineCss(m.body.html),
      text: m.body.text,
      trackOpens: true,
      trackClicks: true,
      // Automation mail is marketing: List-Unsubscribe headers and a working *|UNSUB|*.
      marketing: true,
    },
    m.recipients,
    { kind: 'automation', pipelineId: m.pipelineId, actionId: m.actionId },
    ctx.clock.now(),
  )
  return messageIds
}
