import { getPriority, setPriority } from 'node:os'
import { isMainThread } from 'node:worker_threads'
import MailComposer from 'nodemailer/lib/mail-composer/index.js'
import { move, transferableSymbol, valueSymbol } from 'piscina'
import { buildRawPieces } from '../../core/mail/raw-message.js'
import { preloadInlineCss } from '../../core/mail/inline-css.js'
import { preloadTextPart } from '../../core/mail/text-part.js'
import { toNodemailer } from '../../core/mail/compose.js'
import { dkimSignMessage } from '../../core/mail/dkim-sign.js'
import type { Envelope, OutgoingMail } from '../../core/mail/mailer.js'
import {
  compileCampaign,
  renderCampaignMail,
  trackableHtml,
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

/** One body row's content and some of its recipients; `key` names the content, compiled once per thread. */
export interface BodySlice {
  key: string
  content: BodyContent
  recipients: BodyRecipient[]
}

/**
 * A slice of claimed recipients: of one campaign, or of one or more body rows. Transactional calls are mostly
 * one body row with one recipient each, so a task gathers many rows' slices: one hop to a thread per group of
 * messages rather than per message.
 */
export type SignTask = (
  | { kind: 'campaign'; key: string; content: CampaignContent; recipients: CampaignRecipient[] }
  | { kind: 'body'; slices: BodySlice[] }
  /** Nothing to sign: the thread starts and loads what compiling a campaign needs (signer.ts, warm). */
  | { kind: 'warm' }
) & {
  /** Buffers of earlier tasks whose messages went out, moved back to this thread to hold the next ones. */
  spare?: ArrayBuffer[]
}

/**
 * A campaign's HTML whose trackable links a thread finds (signer.ts, links): the CSS inliner that takes most of
 * it loads here, with the rest of the mail code, rather than on the main thread.
 */
export type LinksTask = { kind: 'links' } & Pick<CampaignContent, 'html' | 'publicUrl'>

export interface SignedMessage {
  messageId: number
  envelope: Envelope
  smtpMessageId: string
  raw: Uint8Array
  /**
   * The subject as rendered, which the ledger row keeps (the email log and webhooks show it): body mail, and
   * campaign mail whose subject has merge tags.
   */
  subject?: string
  /** CRLF line ends only and no line starting with a dot: SMTP carries it as it is (Mailer.sendRaw). */
  dataSafe: boolean
}

/**
 * A signing thread runs this much below the priority of the rest of the process (Linux keeps a nice value per
 * thread; 19 is the lowest): signing is background work that can wait a few milliseconds, while the main thread answers API
 * calls and feeds the relay. At equal priority, every write the main thread made to PostgreSQL or a client woke
 * a process that took its core, and a signing thread kept the other: the main thread lost about a quarter of
 * the transactional intake waiting in `writev` (profiled). The price: every wake of the main thread, PostgreSQL or
 * the relay preempts a signing thread, which a virtualized host makes dear. At nice 0 a campaign message took about
 * 5 % less of such a machine, but the transactional intake answered about 15 % fewer calls (nine and five runs by
 * turns, docs/benchmarks-history.md, 2026-11-29): the API keeps its share.
 */
const SIGN_THREAD_NICE = 10

if (!isMainThread) {
  try {
    // A new thread starts at its creator's nice value.
    setPriority(Math.min(19, getPriority() + SIGN_THREAD_NICE))
  } catch {
    // Not permitted here (some sandboxes): the thread signs at the usual priority.
  }
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

/** Mail with Cc, Bcc, attachments or an AMP part goes through nodemailer's composer (rare: transactional extras). */
async function buildWithParts(mail: OutgoingMail, domain: string) {
  // Campaign mail, whose parts come encoded, has none of these.
  if (mail.encoded) throw new Error('mail with encoded parts takes no attachments, Cc, Bcc or AMP part')
  const opts = toNodemailer(mail, domain)
  delete opts.dkim
  const built = await new MailComposer(opts).compile().build()
  const raw = built.toString('utf8')
  const pieces = [mail.dkim ? dkimSignMessage(raw, mail.dkim) : raw]
  // nodemailer's output is not vouched for: SMTP checks its line ends and dots.
  return { pieces, messageId: String(opts.messageId), dataSafe: false }
}

interface BuiltMessage {
  messageId: number
  envelope: Envelope
  smtpMessageId: string
  /** The message's text in pieces, written one after the other. */
  pieces: string[]
  subject?: string
  dataSafe: boolean
}

async function built(
  mail: OutgoingMail,
  messageId: number,
  bounceDomain: string,
  keepSubject = false,
): Promise<BuiltMessage> {
  const plain = !mail.attachments?.length && !mail.cc?.length && !mail.bcc?.length && mail.amp === undefined
  const {
    pieces,
    messageId: smtpMessageId,
    dataSafe,
  } = plain ? buildRawPieces(mail, bounceDomain) : await buildWithParts(mail, bounceDomain)
  const to = [...mail.to, ...(mail.cc ?? []), ...(mail.bcc ?? [])].map((a) => a.address)
  return {
    messageId,
    envelope: { from: mail.returnPath ?? mail.from.address, to },
    smtpMessageId,
    pieces,
    dataSafe,
    ...(keepSubject ? { subject: mail.subject } : {}),
  }
}

/**
 * Buffers the main thread gave back (signer.ts, release), for the next tasks' messages. Each buffer that reached
 * the main thread counted there as external memory until its collection, and V8 counts that memory towards the
 * old generation's limit: about 40 MB a second of campaign mail set off a full collection every 0.4 s, whose
 * marking took a tenth of the machine from the signing threads (measured). A buffer moved back to a thread
 * no longer counts on the main thread, and is written again here instead of being allocated anew.
 */
const spares: ArrayBuffer[] = []
const SPARES_MAX = 4

function keepSpares(given: ArrayBuffer[] | undefined): void {
  for (const b of given ?? []) if (spares.length < SPARES_MAX) spares.push(b)
}

/**
 * A buffer for `total` bytes: a spare big enough, or a new one with room to spare (the next task's messages
 * differ from these by a few bytes each, and this buffer may come back for them).
 */
function bufferFor(total: number): Buffer {
  const i = spares.findIndex((b) => b.byteLength >= total)
  if (i >= 0) return Buffer.from(spares.splice(i, 1)[0]!)
  return Buffer.allocUnsafeSlow(Math.ceil((total * 1.25) / 65_536) * 65_536)
}

/**
 * The task's messages with their bytes in one buffer of their own, each `raw` a view of it: the buffer moves
 * to the main thread instead of fifty copies being cloned there (and fifty buffers being collected).
 */
function packed(
  messages: BuiltMessage[],
  alloc: (total: number) => Buffer = Buffer.allocUnsafeSlow,
): { buffer: ArrayBuffer; messages: SignedMessage[] } {
  let total = 0
  for (const m of messages) for (const p of m.pieces) total += Buffer.byteLength(p, 'utf8')
  const bytes = alloc(total)
  let at = 0
  const out = messages.map(({ pieces, ...m }): SignedMessage => {
    const start = at
    for (const p of pieces) at += bytes.write(p, at, 'utf8')
    return { ...m, raw: new Uint8Array(bytes.buffer, bytes.byteOffset + start, at - start) }
  })
  return { buffer: bytes.buffer as ArrayBuffer, messages: out }
}

/** A `warm` task: what compiling a campaign loads on first use, loaded now. */
function warmUp(): SignedMessage[] {
  preloadInlineCss()
  preloadTextPart()
  return []
}

async function builtMessages(task: SignTask): Promise<BuiltMessage[]> {
  if (task.kind === 'warm') return []
  if (task.kind === 'campaign') {
    const c = compiledFor(task.key, () => compileCampaign(task.content))
    // A subject with merge tags differs per recipient: the row keeps each one's (the `send` webhook and the
    // events after it tell it), where it held the campaign's as written (`Hi *|name|*`).
    const keepSubject = c.subject.names.size > 0
    return Promise.all(
      task.recipients.map((r) =>
        built(renderCampaignMail(c, r), r.messageId, c.content.bounceDomain, keepSubject),
      ),
    )
  }
  const out: Promise<BuiltMessage>[] = []
  for (const slice of task.slices) {
    const c = compiledFor(slice.key, () => compileBody(slice.content))
    for (const r of slice.recipients)
      out.push(built(renderBodyMail(c, r).mail, r.messageId, c.content.bounceDomain, true))
  }
  return Promise.all(out)
}

/** Renders, composes and DKIM-signs each recipient's message (in this thread: no signing threads). */
export async function signMessages(task: SignTask): Promise<SignedMessage[]> {
  if (task.kind === 'warm') return warmUp()
  return packed(await builtMessages(task)).messages
}

/**
 * The same on a signing thread (signer.ts): the messages' buffer is moved to the main thread, not copied. A
 * links task gives the links by index.
 */
export default async function signMail(task: SignTask | LinksTask): Promise<SignedMessage[] | string[]> {
  if (task.kind === 'links') return trackableHtml(task).links
  keepSpares(task.spare)
  // Before packing, which would take a spare buffer to hand back with no message in it.
  if (task.kind === 'warm') return warmUp()
  const { buffer, messages } = packed(await builtMessages(task), bufferFor)
  // Piscina moves what `transferableSymbol` lists and sends `valueSymbol` in place of the wrapper.
  return move({
    get [transferableSymbol]() {
      return [buffer]
    },
    get [valueSymbol]() {
      return messages
    },
  }) as unknown as SignedMessage[]
}
