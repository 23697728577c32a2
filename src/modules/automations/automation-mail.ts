import type { AppContext } from '../../core/context.js'
import { sql } from 'drizzle-orm'
import type { Executor } from '../../core/db/client.js'
import { queryRows } from '../../core/db/sql.js'
import { inlineCss } from '../../core/mail/inline-css.js'
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
  // One statement for every recipient: the rows travel as one JSON parameter (no bind-parameter limit).
  const rows = m.recipients.map((r, i) => ({
    i,
    email: r.email,
    recipient_name: r.name,
    contact_id: r.contactId,
    vars: r.vars,
  }))
  const inserted = await queryRows<{ id: string | number }>(
    tx,
    sql`INSERT INTO messages (account_id, kind, batch_id, pipeline_id, action_id, contact_id, email, recipient_name,
                              vars, subject, status, track_opens, track_clicks, created_at)
        SELECT ${m.accountId}, 'automation', ${batchId}, ${m.pipelineId}, ${m.actionId}, x.contact_id, x.email,
               x.recipient_name, x.vars, ${m.body.subject}, 0, true, true, ${now.toISOString()}::timestamptz
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS x(i int, email text, recipient_name text, contact_id int, vars jsonb)
        ORDER BY x.i
        RETURNING id`,
  )
  // Ids come from the sequence in the order the SELECT yields the rows (ORDER BY x.i): sorted, they follow
  // the recipients.
  const ids = inserted.map((r) => Number(r.id)).sort((a, b) => a - b)
  await queueBatch(ctx, tx, batchId)
  return ids
}
