import type Mail from 'nodemailer/lib/mailer/index.js'
import { randomUUID } from 'node:crypto'
import { DKIM_HEADERS, signingKey } from './dkim-sign.js'
import type { OutgoingMail } from './mailer.js'

/** Maps our message to nodemailer's options; header values are single-line (CR/LF stripped) by construction. */
export function toNodemailer(mail: OutgoingMail, messageIdDomain: string): Mail.Options {
  const oneLine = (v: string) => v.replace(/[\r\n]+/g, ' ')
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(mail.headers ?? {})) headers[oneLine(k)] = oneLine(v)
  return {
    from: { name: oneLine(mail.from.name ?? ''), address: mail.from.address },
    to: mail.to.map((a) => ({ name: oneLine(a.name ?? ''), address: a.address })),
    cc: mail.cc?.map((a) => ({ name: oneLine(a.name ?? ''), address: a.address })),
    bcc: mail.bcc?.map((a) => ({ name: oneLine(a.name ?? ''), address: a.address })),
    replyTo: mail.replyTo,
    subject: oneLine(mail.subject),
    html: mail.html,
    text: mail.text,
    amp: mail.amp,
    headers,
    messageId: mail.messageId ?? `<${randomUUID()}@${messageIdDomain}>`,
    envelope: mail.returnPath
      ? {
          from: mail.returnPath,
          to: [...mail.to, ...(mail.cc ?? []), ...(mail.bcc ?? [])].map((a) => a.address),
        }
      : undefined,
    dkim: mail.dkim
      ? {
          domainName: mail.dkim.domainName,
          keySelector: mail.dkim.keySelector,
          privateKey: signingKey(mail.dkim.privateKey),
          headerFieldNames: DKIM_HEADERS,
        }
      : undefined,
    attachments: mail.attachments?.map((a) => ({
      filename: a.filename,
      contentType: a.contentType,
      content: a.content,
    })),
  }
}
