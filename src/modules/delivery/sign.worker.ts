import { buildRawMessage } from '../../core/mail/raw-message.js'
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
export default function signCampaignMail(task: SignTask): SignedMessage[] {
  const c = compiledFor(task)
  return task.recipients.map((r) => {
    const mail = renderCampaignMail(c, r)
    const { raw, messageId } = buildRawMessage(mail, c.content.bounceDomain)
    return {
      messageId: r.messageId,
      envelope: { from: mail.returnPath ?? mail.from.address, to: [r.email] },
      smtpMessageId: messageId,
      raw: Buffer.from(raw, 'utf8'),
    }
  })
}
