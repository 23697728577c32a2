import fs from 'node:fs/promises'
import path from 'node:path'
import type { Mailer } from './mailer.js'

/**
 * Without SMTP_URL every message is written to DATA_DIR/outbox as an .eml file a mail client can open, led by
 * the `Return-Path` an MTA adds at delivery (RFC 5321 4.4): the envelope sender (the VERP address), which the
 * message itself does not carry, so bounces can be tried against an outbox too. DKIM does not sign it.
 */
export function createOutboxMailer(dir: string): Mailer {
  let seq = 0
  return {
    async sendRaw(envelope, raw, messageId) {
      await fs.mkdir(dir, { recursive: true })
      // Written under a temporary name and renamed into place: a process killed mid-write left empty `.eml`
      // files behind (the message itself is sent again, from its ledger row).
      const file = path.join(dir, `${Date.now()}-${process.pid}-${++seq}.eml`)
      await fs.writeFile(
        `${file}.tmp`,
        Buffer.concat([Buffer.from(`Return-Path: <${envelope.from}>\r\n`), raw]),
      )
      await fs.rename(`${file}.tmp`, file)
      return { messageId, accepted: [...envelope.to], rejected: [] }
    },
    async close() {},
  }
}
