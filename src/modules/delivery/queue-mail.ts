import type { DbHandle, Executor } from '../../core/db/client.js'
import type { MergeValue } from '../../core/mail/merge-tags.js'
import type { BatchAttachment, BodyKind } from './bodies.table.js'
import { insertBodiesWithMessages } from './bodies.repo.js'

/** The content every recipient of one queued mail shares (its body row). */
export interface MailBody {
  accountId: number
  fromName: string
  fromEmail: string
  replyTo: string | null
  /** May hold merge tags (`*|name|*`), filled in per recipient from their vars when sent. */
  subject: string
  /** As sent: inline CSS before queueing if the HTML needs it. */
  html: string | null
  text: string | null
  /** AMP for Email version (transactional `amp_html`), merge tags filled in per recipient. */
  ampHtml?: string | null
  trackOpens: boolean
  trackClicks: boolean
  /** Marketing mail (automations) gets List-Unsubscribe headers and a working *|UNSUB|*. */
  marketing: boolean
  templateId?: number | null
  attachments?: BatchAttachment[]
  /** Values every recipient has (a recipient's own vars win). */
  globalVars?: Record<string, string>
  /** Cc and Bcc addresses per recipient address (lower-cased), sent in the same SMTP transaction. */
  copies?: Record<string, { cc: string[]; bcc: string[] }>
}

export interface MailRecipient {
  email: string
  name: string
  contactId: number | null
  /** Merge values of this recipient, by lower-cased name (a contact's typed custom fields keep their JSON type). */
  vars: Record<string, MergeValue> | null
}

/** What caused the mail: its kind, and for automation mail its pipeline and action (statistics scope). */
export interface MailOrigin {
  kind: BodyKind
  pipelineId?: number | null
  actionId?: string | null
}

/** One mail to queue: its body, recipients and origin. */
export interface QueuedMail {
  body: MailBody
  recipients: MailRecipient[]
  origin: MailOrigin
}

/**
 * Queues mail in the caller's transaction: one body row and one ledger row per recipient (one statement), so
 * the mail exists exactly when its cause commits. The sender sends it; call wakeSenders() after the commit
 * so that it starts at once (in this process, or in the workers when this process has no sender).
 */
export async function queueMail(
  tx: Executor,
  body: MailBody,
  recipients: MailRecipient[],
  origin: MailOrigin,
  now: Date,
): Promise<{ bodyId: number; messageIds: number[] }> {
  const [queued] = await queueMails(tx, [{ body, recipients, origin }], now)
  return queued!
}

/**
 * queueMail for many mails at once, still one statement (all or none of them): callers that gather the mail of
 * concurrent requests (the transactional intake) pay one round trip and one commit for the lot. Answers each
 * mail's body id and message ids, in the order given. Given the database handle rather than a transaction, the
 * statement is prepared (insertBodiesWithMessages).
 */
export function queueMails(
  on: DbHandle | Executor,
  mails: QueuedMail[],
  now: Date,
): Promise<{ bodyId: number; messageIds: number[] }[]> {
  return insertBodiesWithMessages(
    on,
    mails.map(({ body, recipients, origin }) => ({
      body: {
        accountId: body.accountId,
        kind: origin.kind,
        templateId: body.templateId ?? null,
        fromName: body.fromName,
        fromEmail: body.fromEmail,
        replyTo: body.replyTo,
        subject: body.subject,
        html: body.html,
        text: body.text,
        ampHtml: body.ampHtml ?? null,
        globalVars: body.globalVars ?? {},
        copies: body.copies ?? {},
        attachments: body.attachments ?? [],
        trackOpens: body.trackOpens,
        trackClicks: body.trackClicks,
        marketing: body.marketing,
      },
      recipients: recipients.map((r) => ({
        email: r.email,
        name: r.name,
        contactId: r.contactId,
        vars: r.vars,
        pipelineId: origin.pipelineId ?? null,
        actionId: origin.actionId ?? null,
      })),
    })),
    now,
  )
}
