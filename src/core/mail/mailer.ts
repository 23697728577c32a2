import type { QpPart } from './qp-pieces.js'

export interface MailAddress {
  name?: string
  address: string
}

export interface OutgoingMail {
  from: MailAddress
  to: MailAddress[]
  cc?: MailAddress[]
  bcc?: MailAddress[]
  replyTo?: string
  subject: string
  html?: string
  text?: string
  /** AMP for Email version (`text/x-amp-html`); rare, so composed by nodemailer as mail with attachments is. */
  amp?: string
  /**
   * The text and HTML parts already quoted-printable (campaign mail: its template's text encoded once per
   * campaign), in place of `text` and `html`.
   */
  encoded?: { text?: QpPart; html?: QpPart }
  headers?: Record<string, string>
  /** Envelope sender (VERP return path); the From address when absent. */
  returnPath?: string
  messageId?: string
  attachments?: { filename: string; contentType: string; content: Buffer }[]
  /** Sign with this key (DKIM, RSA-SHA256). */
  dkim?: DkimKey
}

export interface Envelope {
  from: string
  to: string[]
}

export interface SendResult {
  messageId: string
  accepted: string[]
  rejected: string[]
}

/**
 * Hands mail to the relay: over SMTP when SMTP_URL is set, into DATA_DIR/outbox as .eml files otherwise. Only
 * the one sender (module delivery) calls it, with messages it built and signed on its threads.
 */
export interface Mailer {
  /**
   * Sends a message already built and signed, to the envelope given. Once the promise settles, the mailer
   * holds no reference to `raw`: the sender writes the next messages into the same memory.
   */
  sendRaw(
    envelope: Envelope,
    raw: Buffer,
    messageId: string,
    /** `dataSafe`: CRLF line ends only and no line starting with a dot, so SMTP carries it as it is. */
    opts?: { dataSafe?: boolean },
  ): Promise<SendResult>
  close(): Promise<void>
}

export interface DkimKey {
  domainName: string
  keySelector: string
  privateKey: string
}
