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

/** Sends mail: over SMTP when SMTP_URL is set, into DATA_DIR/outbox as .eml files otherwise. */
export interface Mailer {
  send(mail: OutgoingMail): Promise<SendResult>
  /**
   * Sends a message already built and signed (campaign mail is composed and DKIM-signed off the main
   * thread), to the envelope given.
   */
  sendRaw(envelope: Envelope, raw: Buffer, messageId: string): Promise<SendResult>
  close(): Promise<void>
}

export interface DkimKey {
  domainName: string
  keySelector: string
  privateKey: string
}
