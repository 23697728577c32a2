import type { Mailer } from './mailer.js'
import { createRawSmtpPool } from './smtp-raw-pool.js'

export interface SmtpOptions {
  url: string
  maxConnections?: number
}

/**
 * Pooled SMTP relay client: a pool of bare sessions of our own (smtp-session.ts), up to `maxConnections`, for
 * the messages the one sender builds and signs on its threads.
 */
export function createSmtpMailer(opts: SmtpOptions): Mailer {
  const url = new URL(opts.url)
  const relay = {
    host: url.hostname,
    port: Number(url.port || (url.protocol === 'smtps:' ? 465 : 25)),
    secure: url.protocol === 'smtps:',
    auth: url.username
      ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
      : undefined,
    maxConnections: opts.maxConnections ?? 5,
    // The name this host gives in EHLO. Relays that check it reject a bare container id (the default is the
    // machine's host name); `?ehlo=mail.example.com` names the sending host as its DNS knows it.
    name: url.searchParams.get('ehlo') || undefined,
  }
  // A relay on the same host often has no certificate for "localhost"; STARTTLS stays opportunistic.
  const rejectUnauthorized = url.searchParams.get('tls_verify') !== '0' && url.hostname !== '127.0.0.1'
  const rawPool = createRawSmtpPool({ ...relay, rejectUnauthorized })
  return {
    sendRaw: (envelope, raw, messageId, opts) => rawPool.send(envelope, raw, messageId, opts?.dataSafe),
    close: () => rawPool.close(),
  }
}
