import fs from 'node:fs/promises'
import path from 'node:path'
import nodemailer from 'nodemailer'
import type { Mailer } from './mailer.js'
import { toNodemailer } from './compose.js'

/** Without SMTP_URL every message is written to DATA_DIR/outbox as an .eml file a mail client can open. */
export function createOutboxMailer(dir: string, messageIdDomain: string): Mailer {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' })
  let seq = 0
  return {
    async send(mail) {
      const info = await transport.sendMail(toNodemailer(mail, messageIdDomain))
      await fs.mkdir(dir, { recursive: true })
      const name = `${Date.now()}-${process.pid}-${++seq}.eml`
      await fs.writeFile(path.join(dir, name), info.message as Buffer)
      const all = [...mail.to, ...(mail.cc ?? []), ...(mail.bcc ?? [])].map((a) => a.address)
      return { messageId: info.messageId, accepted: all, rejected: [] }
    },
    async sendRaw(envelope, raw, messageId) {
      await fs.mkdir(dir, { recursive: true })
      await fs.writeFile(path.join(dir, `${Date.now()}-${process.pid}-${++seq}.eml`), raw)
      return { messageId, accepted: [...envelope.to], rejected: [] }
    },
    async close() {
      transport.close()
    },
  }
}
