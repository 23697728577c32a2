import fs from 'node:fs/promises'
import path from 'node:path'
import type { Mailer } from './mailer.js'

/** Without SMTP_URL every message is written to DATA_DIR/outbox as an .eml file a mail client can open. */
export function createOutboxMailer(dir: string): Mailer {
  let seq = 0
  return {
    async sendRaw(envelope, raw, messageId) {
      await fs.mkdir(dir, { recursive: true })
      await fs.writeFile(path.join(dir, `${Date.now()}-${process.pid}-${++seq}.eml`), raw)
      return { messageId, accepted: [...envelope.to], rejected: [] }
    },
    async close() {},
  }
}
