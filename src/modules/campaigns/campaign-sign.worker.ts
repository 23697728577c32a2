import nodemailer from 'nodemailer'
import { toNodemailer } from '../../core/mail/compose.js'
import type { Envelope } from '../../core/mail/mailer.js'
import {
  compileCampaign,
  renderCampaignMail,
  type CampaignContent,
  type CampaignRecipient,
  type CompiledCampaign,
} from './campaign-render.js'

/** A slice of one campaign's claimed recipients; `key` names the campaign content, compiled once per thread. */
export interface SignTask {
  key: string
  content: CampaignContent
  recipients: CampaignRecipient[]
}

export interface SignedMessage {
  messageId: number
  envelope: Envelope
  smtpMessageId: string
  raw: Uint8Array
}

// nodemailer builds the MIME tree and signs it (DKIM) into a buffer; no connection is involved here.
const builder = nodemailer.createTransport({ streamTransport: true, buffer: true })
const compiled = new Map<string, CompiledCampaign>()
const CACHE_SIZE = 8

function compiledFor(task: SignTask): CompiledCampaign {
  let c = compiled.get(task.key)
  if (!c) {
    c = compileCampaign(task.content)
    compiled.set(task.key, c)
    // Oldest first out: a thread only ever works on a handful of campaigns at once.
    if (compiled.size > CACHE_SIZE) compiled.delete(compiled.keys().next().value!)
  }
  return c
}

/** Renders, composes and DKIM-signs each recipient's message (run in a worker thread by campaign-signer.ts). */
export default async function signCampaignMail(task: SignTask): Promise<SignedMessage[]> {
  const c = compiledFor(task)
  const out: SignedMessage[] = []
  for (const r of task.recipients) {
    const mail = renderCampaignMail(c, r)
    const info = await builder.sendMail(toNodemailer(mail, c.content.bounceDomain))
    out.push({
      messageId: r.messageId,
      envelope: { from: mail.returnPath ?? mail.from.address, to: [r.email] },
      smtpMessageId: info.messageId,
      raw: info.message as Buffer,
    })
  }
  return out
}
