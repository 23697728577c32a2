import nodemailer from 'nodemailer'
import type { Mailer } from './mailer.js'
import { toNodemailer } from './compose.js'

export interface SmtpOptions {
  url: string
  messageIdDomain: string
  maxConnections?: number
}

/** Pooled SMTP relay client. */
export function createSmtpMailer(opts: SmtpOptions): Mailer {
  const url = new URL(opts.url)
  const transport = nodemailer.createTransport({
    pool: true,
    host: url.hostname,
    port: Number(url.port || (url.protocol === 'smtps:' ? 465 : 25)),
    secure: url.protocol === 'smtps:',
    auth: url.username
      ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
      : undefined,
    maxConnections: opts.maxConnections ?? 5,
    maxMessages: Infinity,
    // A relay on the same host often has no certificate for "localhost"; STARTTLS stays opportunistic.
    tls: { rejectUnauthorized: url.searchParams.get('tls_verify') !== '0' && url.hostname !== '127.0.0.1' },
  })
  return {
    async send(mail) {
      const info = await transport.sendMail(toNodemailer(mail, opts.messageIdDomain))
      return {
        messageId: info.messageId,
        accepted: info.accepted.map(String),
        rejected: info.rejected.map(String),
      }
    },
    async sendRaw(envelope, raw, messageId) {
      const info = await transport.sendMail({ envelope: { from: envelope.from, to: envelope.to }, raw })
      return {
        messageId,
        accepted: info.accepted.map(String),
        rejected: info.rejected.map(String),
      }
    },
    async close() {
      transport.close()
    },
  }
}
