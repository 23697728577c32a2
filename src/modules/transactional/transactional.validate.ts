import { FieldErrorBag } from '../../core/http/errors.js'
import { isValidEmail, normalizeEmail, splitMailbox } from '../../core/http/email.js'
import { flagOn } from '../../core/http/schemas.js'
import type { MessageInput } from './transactional.schemas.js'
import type { BatchAttachment, BatchCopies } from '../delivery/index.js'

/** api.md rule 4: filled in from the recipient by the sender, so a caller may not set them. */
export const RESERVED_MERGE_NAMES: ReadonlySet<string> = new Set([
  'address.name',
  'email',
  'email_id',
  'address.email',
  'env_from',
])
/**
 * api.md Limits: merge tags 100,000 bytes in total (inclusive), measured as the UTF-8 bytes of every merge value
 * as it is inserted, global and per recipient together. Not the JSON received: its escapes (a newline is two
 * bytes there) and punctuation would refuse data well under the limit.
 */
export const MAX_MERGE_DATA_BYTES = 100_000
/** api.md Limits: the message including attachments under 4 MB (MiB here; attachments counted decoded). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024

export interface Recipient {
  email: string
  name: string
}

/** A validated call, normalised: what the intake transaction writes. */
export interface PreparedMessage {
  subject: string
  html: string | undefined
  text: string | undefined
  ampHtml: string | undefined
  fromName: string
  fromEmail: string
  replyTo: string | undefined
  /** Valid `to` addresses, each once, in the order given (suppression is checked later, against the database). */
  recipients: Recipient[]
  /** Distinct `to` entries that are no address. */
  invalid: number
  copies: Record<string, BatchCopies>
  globalVars: Record<string, string>
  varsByRecipient: Map<string, Record<string, string>>
  attachments: BatchAttachment[]
  trackOpens: boolean
  trackClicks: boolean
}

function mergeValue(content: unknown): string {
  if (content === null || content === undefined) return ''
  if (typeof content === 'string') return content
  if (typeof content === 'number' || typeof content === 'boolean') return String(content)
  return JSON.stringify(content)
}

/** Collects the variables into `into`; answers the bytes of their values (MAX_MERGE_DATA_BYTES). */
function collectVars(
  vars: readonly { name: string; content?: unknown }[],
  into: Record<string, string>,
  path: string,
  errors: FieldErrorBag,
): number {
  let bytes = 0
  vars.forEach((v, i) => {
    const name = v.name.trim().toLowerCase()
    const value = mergeValue(v.content)
    bytes += Buffer.byteLength(value)
    if (RESERVED_MERGE_NAMES.has(name)) {
      errors.add(`${path}.${i}.name`, `The merge tag name "${v.name}" is reserved.`)
    } else if (name !== '__proto__') {
      into[name] = value
    }
  })
  return bytes
}

// One character class, no repeated group: a group repeated a million times overflows the regexp stack.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** Decoded size of strict base64 (line breaks allowed, as MIME encoders wrap), or null when it is not base64. */
export function base64Size(content: string): { clean: string; bytes: number } | null {
  const clean = content.replace(/[\r\n\t ]+/g, '')
  if (clean.length % 4 !== 0 || !BASE64.test(clean)) return null
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0
  return { clean, bytes: (clean.length / 4) * 3 - padding }
}

/**
 * A cc or bcc value: its address, and the name a mailbox gave it (`"Jana" <jana@example.cz>`). '' for none; an
 * invalid one is also a 422 at its field.
 */
function copyAddress(
  value: string | null | undefined,
  path: string,
  errors: FieldErrorBag,
): { address: string; name: string } {
  if (!value || !value.trim()) return { address: '', name: '' }
  const mailbox = splitMailbox(value)
  const address = normalizeEmail(mailbox.address)
  if (!isValidEmail(address)) {
    errors.add(path, `The selected ${path.slice(path.lastIndexOf('.') + 1)} is invalid.`)
    return { address: '', name: '' }
  }
  return { address, name: mailbox.name }
}

function collectRecipients(input: MessageInput, prepared: PreparedMessage, errors: FieldErrorBag): void {
  const seen = new Map<string, Recipient>()
  const invalid = new Set<string>()
  const add = (list: string[], address: string) => {
    if (address && !list.includes(address)) list.push(address)
  }
  input.to.forEach((entry, i) => {
    const cc = copyAddress(entry.cc, `message.to.${i}.cc`, errors)
    const bcc = copyAddress(entry.bcc, `message.to.${i}.bcc`, errors)
    // Mail libraries write an address with a name as a mailbox (`"Jana" <jana@example.cz>`).
    const mailbox = splitMailbox(entry.email)
    const email = normalizeEmail(mailbox.address)
    if (!isValidEmail(email)) {
      invalid.add(normalizeEmail(entry.email))
      return
    }
    let r = seen.get(email)
    if (!r) {
      r = { email, name: '' }
      seen.set(email, r)
      prepared.recipients.push(r)
    }
    if (!r.name) r.name = entry.name?.trim() || mailbox.name
    if (cc.address || bcc.address) {
      const copies = (prepared.copies[email] ??= { cc: [], bcc: [] })
      add(copies.cc, cc.address)
      add(copies.bcc, bcc.address)
      // Shown in the Cc header; a bcc's name would be shown nowhere.
      if (cc.address && cc.name) (copies.names ??= {})[cc.address] ??= cc.name
    }
  })
  prepared.invalid = invalid.size
}

function collectAttachments(input: MessageInput, prepared: PreparedMessage, errors: FieldErrorBag): number {
  let bytes = 0
  ;(input.attachments ?? []).forEach((a, i) => {
    const decoded = base64Size(a.content)
    if (!decoded) {
      errors.add(`message.attachments.${i}.content`, 'The content must be valid base64.')
      return
    }
    bytes += decoded.bytes
    prepared.attachments.push({ name: a.name, type: a.type, content: decoded.clean })
  })
  return bytes
}

/** Every rule of api.md beyond the schema, all reported at once; throws a 422 with the field paths. */
export function prepareMessage(input: MessageInput): PreparedMessage {
  const errors = new FieldErrorBag()
  // send-template falls back to the template's subject; both routes need one in the end.
  if (!input.subject.trim()) errors.add('message.subject', 'The subject field is required.')
  const html = input.html || undefined
  const text = input.text || undefined
  if (!html && !text) errors.add('message.html', 'The html field is required when text is not present.')
  const prepared: PreparedMessage = {
    subject: input.subject,
    html,
    text,
    ampHtml: input.amp_html || undefined,
    fromName: input.from_name,
    fromEmail: normalizeEmail(input.from_email),
    replyTo: input.reply_to ? normalizeEmail(input.reply_to) : undefined,
    recipients: [],
    invalid: 0,
    copies: {},
    globalVars: {},
    varsByRecipient: new Map(),
    attachments: [],
    trackOpens: flagOn(input.options?.open_tracking ?? true),
    trackClicks: flagOn(input.options?.click_tracking ?? true),
  }
  collectRecipients(input, prepared, errors)

  let mergeBytes = collectVars(
    input.global_merge_vars ?? [],
    prepared.globalVars,
    'message.global_merge_vars',
    errors,
  )
  ;(input.merge_vars ?? []).forEach((rv, i) => {
    const rcpt = normalizeEmail(splitMailbox(rv.rcpt).address)
    let vars = prepared.varsByRecipient.get(rcpt)
    if (!vars) prepared.varsByRecipient.set(rcpt, (vars = {}))
    mergeBytes += collectVars(rv.vars, vars, `message.merge_vars.${i}.vars`, errors)
  })
  if (mergeBytes > MAX_MERGE_DATA_BYTES) {
    const field = input.merge_vars?.length ? 'message.merge_vars' : 'message.global_merge_vars'
    errors.add(field, `The merge tags must not be greater than ${MAX_MERGE_DATA_BYTES} bytes in total.`)
  }

  const attachmentBytes = collectAttachments(input, prepared, errors)
  const size =
    Buffer.byteLength(prepared.subject) +
    Buffer.byteLength(prepared.fromName) +
    (html ? Buffer.byteLength(html) : 0) +
    (text ? Buffer.byteLength(text) : 0) +
    (prepared.ampHtml ? Buffer.byteLength(prepared.ampHtml) : 0) +
    attachmentBytes
  if (size >= MAX_MESSAGE_BYTES) {
    // Named by what makes it large: the attachments, or the larger of the two HTML versions.
    const field = prepared.attachments.length
      ? 'message.attachments'
      : (prepared.ampHtml?.length ?? 0) > (html?.length ?? 0)
        ? 'message.amp_html'
        : 'message.html'
    errors.add(field, 'The message including attachments must be smaller than 4 MB.')
  }
  errors.throwIfAny()
  return prepared
}
