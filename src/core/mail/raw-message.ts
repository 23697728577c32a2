import { randomUUID } from 'node:crypto'
import MimeNode from 'nodemailer/lib/mime-node/index.js'
import { toNodemailer } from './compose.js'
import { dkimSignatureField } from './dkim-sign.js'
import { headerEncoder, headerLine } from './header-line.js'
import type { OutgoingMail } from './mailer.js'
import type { QpPart } from './qp-pieces.js'
import { qpEncodeText } from './quoted-printable.js'

const CRLF = '\r\n'

/** A text part, quoted-printable (always valid, and readable for the mostly-ASCII text of mail). */
function textPart(type: 'text/plain' | 'text/html', content: string | QpPart) {
  return {
    type: `${type}; charset=utf-8`,
    body: typeof content === 'string' ? qpEncodeText(content) : content.encoded(),
  }
}

const MULTIPART = 'multipart/alternative'

/** A bare CR or LF, or a line that starts with a dot: what SMTP's DATA would have to rewrite (smtp-session.ts). */
const UNSAFE_FOR_DATA = /\r(?!\n)|(?<!\r)\n|^\.|\n\./

/** True when SMTP's DATA can carry this text as it is: CRLF line ends only, no line starting with a dot. */
export const dataSafeText = (text: string): boolean => !UNSAFE_FOR_DATA.test(text)

/**
 * Header lines that repeat from message to message (a campaign's From, Reply-To, List-Unsubscribe-Post, its
 * Content-Type), as MimeNode writes them; bounded, a thread builds the mail of a few contents at a time.
 */
const knownLines = new Map<string, string>()
const KNOWN_LINES_MAX = 256

function remembered(key: string, make: () => string): string {
  let line = knownLines.get(key)
  if (line === undefined) {
    line = make()
    if (knownLines.size >= KNOWN_LINES_MAX) knownLines.clear()
    knownLines.set(key, line)
  }
  return line
}

/** Header names as MimeNode.setHeader writes them (`x-campaign` → `X-Campaign`), once per name. */
function normalKey(key: string): string {
  return remembered(`\0key\0${key}`, () => headerEncoder._normalizeHeaderKey(key))
}

/**
 * Names the fast header block writes itself, or that MimeNode treats apart: a message whose extra headers
 * name one of them is built by MimeNode as before (transactional mail may carry headers of the caller's).
 */
const OWN_NAMES = new Set([
  'From',
  'To',
  'Reply-To',
  'Subject',
  'Message-ID',
  'Date',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'Content-Disposition',
  'Bcc',
  'Cc',
  'Sender',
])

/** Headers whose values repeat across a campaign's messages: their lines are encoded once. */
const REPEATING = new Set(['From', 'Reply-To', 'List-Unsubscribe-Post'])

// A stand-in of the boundary's shape: folding depends on lengths and character classes only, so the
// Content-Type line made with it once takes each message's own boundary in its place.
const SAMPLE_UUID = '00000000-0000-4000-8000-000000000000'

/** The Content-Type line (and its Content-Transfer-Encoding, for a single part), once per type. */
function contentTypeLines(type: string, unique: string, single: boolean): { before: string; last: string } {
  const lines = remembered(`\0ct\0${type}\0${single}`, () => {
    const root = new MimeNode(single ? type : `${type}; boundary="--_TdS-${SAMPLE_UUID}"`, {
      baseBoundary: SAMPLE_UUID,
    })
    if (single) root.setHeader('Content-Transfer-Encoding', 'quoted-printable')
    root.setHeader('Date', 'x')
    root.setHeader('Message-ID', '<x>')
    root.setHeader('MIME-Version', '1.0')
    return root.buildHeaders()
  })
  const at = lines.indexOf('\r\nContent-Type: ')
  const cte = lines.slice(0, lines.indexOf('\r\nDate: '))
  const last = lines.slice(at + 2)
  return { before: single ? cte : '', last: single ? last : last.replace(SAMPLE_UUID, unique) }
}

let dateSecond = -1
let dateValue = ''

/** The Date header's value as MimeNode writes it, made once a second. */
function dateNow(): string {
  const now = Date.now()
  const second = Math.floor(now / 1000)
  if (second !== dateSecond) {
    dateSecond = second
    dateValue = new Date(now).toUTCString().replace(/GMT/, '+0000')
  }
  return dateValue
}

/**
 * The header block MimeNode.buildHeaders would write for these headers (same encoders, same order: a single
 * part's Content-Transfer-Encoding first, then the headers as given, Date, MIME-Version, Content-Type last),
 * without building a MIME tree per message and with the lines that repeat encoded once (profiled: MimeNode's
 * header building was about a seventh of a signing thread's time). Checked byte for byte against MimeNode in
 * the tests.
 */
export function headerBlock(
  headers: [string, unknown][],
  type: string,
  unique: string,
  single: boolean,
): string {
  const { before, last } = contentTypeLines(type, unique, single)
  const out: string[] = before ? [before] : []
  for (const [key, value] of headers) {
    const line = REPEATING.has(key)
      ? remembered(`${key}\0${JSON.stringify(value)}`, () => headerLine(key, value))
      : headerLine(key, value)
    if (line) out.push(line)
  }
  out.push(`Date: ${dateNow()}`, 'MIME-Version: 1.0', last)
  return out.join(CRLF)
}

/** The header block as MimeNode builds it: for messages whose extra headers name one of OWN_NAMES. */
export function mimeNodeHeaders(headers: [string, unknown][], type: string, unique: string, single: boolean) {
  const root = new MimeNode(single ? type : `${type}; boundary="--_TdS-${unique}"`, { baseBoundary: unique })
  // Without content of its own, MimeNode leaves the transfer encoding to us.
  if (single) root.setHeader('Content-Transfer-Encoding', 'quoted-printable')
  for (const [k, v] of headers) root.setHeader(k, v as string)
  return root.buildHeaders()
}

/**
 * One message of a bulk send (text and/or HTML, no attachments, one recipient) as a signed RFC 5322 string,
 * with its Message-ID.
 * Campaign mail is made here rather than by nodemailer's mailer: its stream pipeline (MIME tree, encoders,
 * line-end transforms, DKIM stream) took about two thirds of a signing thread's time (measured,
 * docs/benchmarks-history.md).
 * nodemailer still does what is easy to get wrong: header encoding, address quoting and folding
 * (MimeNode.buildHeaders); quoted-printable is ours (quoted-printable.ts), several times faster than its encoder.
 */
export function buildRawMessage(
  mail: OutgoingMail,
  messageIdDomain: string,
): { raw: string; messageId: string } {
  const { pieces, messageId } = buildRawPieces(mail, messageIdDomain)
  return { raw: pieces.join(''), messageId }
}

/**
 * The same message as pieces to write one after the other: its DKIM-Signature field (when signed), the header
 * block, the blank line and the body. A signing thread writes them straight into the bytes it hands over,
 * rather than joining a copy of the message first.
 */
export function buildRawPieces(
  mail: OutgoingMail,
  messageIdDomain: string,
): { pieces: string[]; messageId: string; dataSafe: boolean } {
  if (mail.attachments?.length || mail.cc?.length || mail.bcc?.length || mail.amp !== undefined)
    throw new Error('buildRawMessage takes no attachments, Cc, Bcc or AMP part')
  const text = mail.encoded?.text ?? mail.text
  const html = mail.encoded?.html ?? mail.html
  const parts = [
    ...(text !== undefined ? [textPart('text/plain', text)] : []),
    ...(html !== undefined ? [textPart('text/html', html)] : []),
  ]
  if (parts.length === 0) parts.push(textPart('text/plain', ''))
  const opts = toNodemailer(mail, messageIdDomain)
  // randomUUID draws from a buffered pool; MimeNode would call randomBytes for a boundary of its own.
  const unique = randomUUID()
  const boundary = `--_TdS-${unique}`
  const single = parts.length === 1 ? parts[0]! : undefined
  const extra = Object.entries((opts.headers ?? {}) as Record<string, string>).map(
    ([k, v]): [string, unknown] => [normalKey(k), v],
  )
  const fast = extra.every(([k], i) => !OWN_NAMES.has(k) && extra.findIndex(([o]) => o === k) === i)
  // MimeNode takes address objects (as MailComposer gives it) though its types only list strings; objects
  // keep a display name with commas or quotes from being parsed as more addresses.
  const headers: [string, unknown][] = [
    ['From', opts.from],
    ['To', opts.to],
    ...(opts.replyTo ? [['Reply-To', opts.replyTo] as [string, unknown]] : []),
    ['Subject', String(opts.subject ?? '')],
    ['Message-ID', String(opts.messageId)],
  ]
  const type = single ? single.type : MULTIPART
  const head = fast
    ? headerBlock([...headers, ...extra], type, unique, !!single)
    : mimeNodeHeaders([...headers, ...Object.entries(opts.headers ?? {})], type, unique, !!single)
  const body = single
    ? single.body
    : parts
        .map(
          (p) =>
            `--${boundary}${CRLF}Content-Type: ${p.type}${CRLF}Content-Transfer-Encoding: quoted-printable` +
            `${CRLF}${CRLF}${p.body}${CRLF}`,
        )
        .join('') + `--${boundary}--${CRLF}`
  // The body is our quoted-printable between our MIME lines: DKIM's relaxed form of it is itself.
  const signature = mail.dkim ? dkimSignatureField(head, body, mail.dkim, true) : ''
  const pieces = [head, `${CRLF}${CRLF}`, body]
  if (signature) pieces.unshift(signature)
  // The body, by the same token, has CRLF line ends only and no line starting with a dot; the header lines
  // (a caller's values in them) and the signature are checked, a kilobyte or so instead of the whole message.
  const dataSafe = dataSafeText(head) && dataSafeText(signature)
  return { pieces, messageId: String(opts.messageId), dataSafe }
}
