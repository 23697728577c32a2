import type { AppContext } from '../../core/context.js'
import type { Executor } from '../../core/db/client.js'
import { inlineCss } from '../../core/mail/inline-css.js'
import { messages } from '../messages/index.js'
import { insertBatch, queueBatch } from '../transactional/index.js'

/**
 * The engine's one road to the send ledger. Until the shared `queueMail` lands this writes what a
 * transactional call writes: a `message_batches` row holding the content, one `messages` row per recipient
 * (kind 'automation', pipeline_id, action_id = node id, contact_id) and the send job, all in the caller's
 * transaction, so a node's mail exists exactly when its log entry and the run's move commit.
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
  ctx: Pick<AppContext, 'jobs' | 'clock'>,
  tx: Executor,
  m: AutomationMail,
): Promise<number[]> {
  if (m.recipients.length === 0) return []
  const now = ctx.clock.now()
  const batchId = await insertBatch(
    tx,
    {
      accountId: m.accountId,
      templateId: null,
      fromName: m.body.fromName,
      fromEmail: m.body.fromEmail,
      replyTo: m.body.replyTo,
      subject: m.body.subject,
      html: m.body.html === null ? null : inlineCss(m.body.html),
      text: m.body.text,
      globalVars: {},
      copies: {},
      attachments: [],
      trackOpens: true,
      trackClicks: true,
    },
    now,
  )
  const ids: number[] = []
  // In slices: one INSERT of thousands of rows would pass PostgreSQL's 65,535 bind parameters.
  for (let i = 0; i < m.recipients.length; i += 1000) {
    const rows = await tx
      .insert(messages)
      .values(
        m.recipients.slice(i, i + 1000).map((r) => ({
          accountId: m.accountId,
          kind: 'automation' as const,
          batchId,
          pipelineId: m.pipelineId,
          actionId: m.actionId,
          contactId: r.contactId,
          email: r.email,
          recipientName: r.name,
          vars: r.vars,
          subject: m.body.subject,
          status: 0,
          trackOpens: true,
          trackClicks: true,
          createdAt: now,
        })),
      )
      .returning({ id: messages.id })
    // Multi-row VALUES come back in the order given; sorted to be sure, as ids grow in insertion order.
    ids.push(...rows.map((r) => r.id).sort((a, b) => a - b))
  }
  await queueBatch(ctx, tx, batchId)
  return ids
}
