import MailComposer from 'nodemailer/lib/mail-composer/index.js'
import { buildRawMessage } from '../../core/mail/raw-message.js'
import { toNodemailer } from '../../core/mail/compose.js'
import { dkimSignMessage } from '../../core/mail/dkim-sign.js'
import type { Envelope, OutgoingMail } from '../../core/mail/mailer.js'
import {
  compileCampaign,
  renderCampaignMail,
  type CampaignContent,
  type CampaignRecipient,
  type CompiledCampaign,
} from './render.js'
import {
  compileBody,
  renderBodyMail,
  type BodyContent,
  type BodyRecipient,
  type CompiledBody,
} from './body-render.js'

/**
 * A slice of one origin's claimed recipients: a campaign's, or one body row's. `key` names the content,
 * compiled once per thread.
 */
export type SignTask =
  | { kind: 'campaign'; key: string; content: CampaignContent; recipients: CampaignRecipient[] }
  | { kind: 'body'; key: string; content: BodyContent; recipients: BodyRecipient[] }

export interface SignedMessage {
  messageId: number
  envelope: Envelope
  smtpMessageId: string
  raw: Uint8Array
  /** Body mail: the subject as rendered, which its ledger row keeps (the email log shows it). */
  subject?: string
}

const compiled = new Map<string, CompiledCampaign | CompiledBody>()
const CACHE_SIZE = 8

function compiledFor<T extends CompiledCampaign | CompiledBody>(key: string, compile: () => T): T {
  let c = compiled.get(key) as T | undefined
  if (!c) {
    c = compile()
    compiled.set(key, c)
    // Oldest first out: a thread only ever works on a handful of contents at once.
    if (compiled.size > CACHE_SIZE) compiled.delete(compiled.keys().next().value!)
  }
  return c
}

/** Mail with Cc, Bcc or attachments goes through nodemailer's composer (rare: transactional extras). */
async function buildWithParts(mail: OutgoingMail, domain: string) {
  const opts = toNodemailer(mail, domain)
  delete opts.dkim
  const built = await new MailComposer(opts).compile().build()
  const raw = built.toString('utf8')
  return { raw: mail.dkim ? dkimSignMessage(raw, mail.dkim) : raw, messageId: String(opts.messageId) }
}

async function signed(
  mail: OutgoingMail,
  messageId: number,
  bounceDomain: string,
  keepSubject = false,
): Promise<SignedMessage> {
  const plain = !mail.attachments?.length && !mail.cc?.length && !mail.bcc?.length
  const { raw, messageId: smtpMessageId } = plain
    ? buildRawMessage(mail, bounceDomain)
    : await buildWithParts(mail, bounceDomain)
  const to = [...mail.to, ...(mail.cc ?? []), ...(mail.bcc ?? [])].map((a) => a.address)
  return {
    messageId,
    envelope: { from: mail.returnPath ?? mail.from.address, to },
    smtpMessageId,
    raw: Buffer.from(raw, 'utf8'),
    ...(keepSubject ? { subject: mail.subject } : {}),
  }
}

/** Renders, composes and DKIM-signs each recipient's message (run in a worker thread by signer.ts). */
export default async function signMail(task: SignTask): Promise<SignedMessage[]> {
  if (task.kind === 'campaign') {
    const c = compiledFor(task.key, () => compileCampaign(task.content))
    return Promise.all(
      task.recipients.map((r) => signed(renderCampaignMail(c, r), r.messageId, c.content.bounceDomain)),
    )
  }
  const c = compiledFor(task.key, () => compileBody(task.content))
  return Promise.all(
    task.recipients.map((r) => signed(renderBodyMail(c, r).mail, r.messageId, c.content.bounceDomain, true)),
  )
}
