import { randomUUID } from 'node:crypto'
import MimeNode from 'nodemailer/lib/mime-node/index.js'
import { toNodemailer } from './compose.js'
import { dkimSignMessage } from './dkim-sign.js'
import type { OutgoingMail } from './mailer.js'
import { qpEncodeText } from './quoted-printable.js'

const CRLF = '\r\n'

/** A text part, quoted-printable (always valid, and readable for the mostly-ASCII text of mail). */
function textPart(type: 'text/plain' | 'text/html', content: string) {
  return { type: `${type}; charset=utf-8`, body: qpEncodeText(content) }
}

/**
 * One message of a bulk send (text and/or HTML, no attachments, one recipient) as a signed RFC 5322 string,
 * with its Message-ID.
 * Campaign mail is made here rather than by nodemailer's mailer: its stream pipeline (MIME tree, encoders,
 * line-end transforms, DKIM stream) took about two thirds of a signing thread's time (measured, see README).
 * nodemailer still does what is easy to get wrong: header encoding, address quoting and folding
 * (MimeNode.buildHeaders); quoted-printable is ours (quoted-printable.ts), several times faster than its encoder.
 */
export function buildRawMessage(
  mail: OutgoingMail,
  messageIdDomain: string,
): { raw: string; messageId: string } {
  if (mail.attachments?.length || mail.cc?.length || mail.bcc?.length)
    throw new Error('buildRawMessage takes no attachments, Cc or Bcc')
  const parts = [
    ...(mail.text !== undefined ? [textPart('text/plain', mail.text)] : []),
    ...(mail.html !== undefined ? [textPart('text/html', mail.html)] : []),
  ]
  if (parts.length === 0) parts.push(textPart('text/plain', ''))
  const opts = toNodemailer(mail, messageIdDomain)
  // randomUUID draws from a buffered pool; MimeNode would call randomBytes for a boundary of its own.
  const unique = randomUUID()
  const boundary = `--_TdS-${unique}`
  const single = parts.length === 1 ? parts[0]! : undefined
  const root = new MimeNode(single ? single.type : `multipart/alternative; boundary="${boundary}"`, {
    baseBoundary: unique,
  })
  // Without content of its own, MimeNode leaves the transfer encoding to us.
  if (single) root.setHeader('Content-Transfer-Encoding', 'quoted-printable')
  // MimeNode takes address objects (as MailComposer gives it) though its types only list strings; objects
  // keep a display name with commas or quotes from being parsed as more addresses.
  const addresses = (v: unknown) => v as string
  root.setHeader('From', addresses(opts.from))
  root.setHeader('To', addresses(opts.to))
  if (opts.replyTo) root.setHeader('Reply-To', addresses(opts.replyTo))
  root.setHeader('Subject', String(opts.subject ?? ''))
  root.setHeader('Message-ID', String(opts.messageId))
  for (const [k, v] of Object.entries((opts.headers ?? {}) as Record<string, string>)) root.setHeader(k, v)

  const body = single
    ? single.body
    : parts
        .map(
          (p) =>
            `--${boundary}${CRLF}Content-Type: ${p.type}${CRLF}Content-Transfer-Encoding: quoted-printable` +
            `${CRLF}${CRLF}${p.body}${CRLF}`,
        )
        .join('') + `--${boundary}--${CRLF}`
  const raw = `${root.buildHeaders()}${CRLF}${CRLF}${body}`
  return { raw: mail.dkim ? dkimSignMessage(raw, mail.dkim) : raw, messageId: String(opts.messageId) }
}
