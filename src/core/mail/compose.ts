import type Mail from 'nodemailer/lib/mailer/index.js'
import { createPrivateKey, randomUUID, type KeyObject } from 'node:crypto'
import type { OutgoingMail } from './mailer.js'

/**
 * Headers covered by DKIM signatures: nodemailer's defaults plus both unsubscribe headers, which mailbox
 * providers only honour for one-click unsubscribe when they are signed (RFC 8058 §4).
 */
const DKIM_HEADERS =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:' +
  'Content-ID:Content-Description:Resent-Date:Resent-From:Resent-Sender:Resent-To:Resent-Cc:Resent-Message-ID:' +
  'In-Reply-To:References:List-Id:List-Help:List-Unsubscribe:List-Unsubscribe-Post:List-Subscribe:List-Post:' +
  'List-Owner:List-Archive'

/**
 * Parsed DKIM keys by their PEM text. Handing nodemailer the PEM made node parse the RSA key again for every
 * signature, which cost several times the signing itself; a parsed KeyObject is reused. Bounded: a process
 * signs for a handful of domains at a time.
 */
const parsedKeys = new Map<string, KeyObject>()
const PARSED_KEYS_MAX = 100

function signingKey(pem: string): KeyObject {
  let key = parsedKeys.get(pem)
  if (!key) {
    key = createPrivateKey(pem)
    if (parsedKeys.size >= PARSED_KEYS_MAX) parsedKeys.delete(parsedKeys.keys().next().value!)
    parsedKeys.set(pem, key)
  }
  return key
}

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
