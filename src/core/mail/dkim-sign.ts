import { createHash, createPrivateKey, sign, type KeyObject } from 'node:crypto'
import type { DkimKey } from './mailer.js'

/**
 * Headers covered by DKIM signatures: nodemailer's defaults plus both unsubscribe headers, which mailbox
 * providers only honour for one-click unsubscribe when they are signed (RFC 8058 §4).
 */
export const DKIM_HEADERS =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:' +
  'Content-ID:Content-Description:Resent-Date:Resent-From:Resent-Sender:Resent-To:Resent-Cc:Resent-Message-ID:' +
  'In-Reply-To:References:List-Id:List-Help:List-Unsubscribe:List-Unsubscribe-Post:List-Subscribe:List-Post:' +
  'List-Owner:List-Archive'

const SIGNED_NAMES = DKIM_HEADERS.toLowerCase().split(':')

/**
 * Parsed DKIM keys by their PEM text. Handing a PEM to the signer made node parse the RSA key again for every
 * signature, which cost several times the signing itself; a parsed KeyObject is reused. Bounded: a process
 * signs for a handful of domains at a time.
 */
const parsedKeys = new Map<string, KeyObject>()
const PARSED_KEYS_MAX = 100

export function signingKey(pem: string): KeyObject {
  let key = parsedKeys.get(pem)
  if (!key) {
    key = createPrivateKey(pem)
    if (parsedKeys.size >= PARSED_KEYS_MAX) parsedKeys.delete(parsedKeys.keys().next().value!)
    parsedKeys.set(pem, key)
  }
  return key
}

/**
 * The runs of spaces and tabs that relaxed canonicalisation changes to one space: any run with a tab, or of two
 * or more spaces. A single space is left alone rather than matched and replaced by itself (in an indented
 * template's body, every space between words was a match).
 */
const WSP_TO_SQUEEZE = /\t[ \t]*| [ \t]+/g

/** RFC 6376 §3.4.2: a header field in "relaxed" form, name lower-cased, value unfolded and its spaces squeezed. */
const relaxedHeader = (name: string, value: string) =>
  `${name}:${value.replace(/\r\n/g, '').replace(WSP_TO_SQUEEZE, ' ').trim()}\r\n`

/** RFC 6376 §3.4.4 a and b: spaces squeezed, none at line ends. */
const relaxedLines = (body: string) => body.replace(/[ \t]+\r\n/g, '\r\n').replace(WSP_TO_SQUEEZE, ' ')

/** RFC 6376 §3.4.4 c: no empty lines at the end, and a body that is not empty ends in a line end. */
function relaxedEnd(body: string): string {
  let end = body.length
  while (end >= 2 && body.charCodeAt(end - 2) === 13 && body.charCodeAt(end - 1) === 10) end -= 2
  // Ours end in exactly one line end: the body as it is, rather than a copy of it with that line end again.
  if (end > 0 && end === body.length - 2) return body
  return end > 0 ? `${body.slice(0, end)}\r\n` : ''
}

/** RFC 6376 §3.4.4: the body in "relaxed" form: spaces squeezed, none at line ends, no empty lines at the end. */
function relaxedBody(body: string): string {
  // Spaces at line ends dropped, then runs squeezed, on every body: cheaper than first searching it for double
  // spaces, tabs and spaces before line ends to skip the passes (13 µs for an 11 KB campaign body, against 8 for
  // the passes; an indented template's body took 28 µs when every single space was a match). A replace that
  // finds nothing returns the same string.
  return relaxedEnd(relaxedLines(body).replace(/ $/, ''))
}

/** The `h=` tag's value by the names it lists: the same few sets of headers, message after message. */
const namesTags = new Map<string, string>()
const NAMES_TAGS_MAX = 64

/** The signed header names, folded so that no line passes 78 characters (relaxed canonicalisation ignores where). */
function namesTag(names: string[]): string {
  const list = names.join(':')
  let tag = namesTags.get(list)
  if (tag === undefined) {
    tag = list
      .replace(/(.{1,70})(:|$)/g, (_, run: string, colon: string) => `${run}${colon}\r\n `)
      .replace(/\r\n $/, '')
    if (namesTags.size >= NAMES_TAGS_MAX) namesTags.clear()
    namesTags.set(list, tag)
  }
  return tag
}

/** The signature's base64 in lines of 72 characters (a regular expression for it showed in the profile). */
function folded(b64: string): string {
  let out = b64.slice(0, 72)
  for (let at = 72; at < b64.length; at += 72) out += `\r\n ${b64.slice(at, at + 72)}`
  return out
}

/**
 * DKIM-signs a message, relaxed/relaxed with RSA-SHA256 over the headers of DKIM_HEADERS it has, and returns it
 * with its line ends made CRLF and its DKIM-Signature on top. Campaign mail is
 * signed here rather than by nodemailer's DKIM stream: with the message already in one string, the stream's
 * parsing and ticks cost about as much as the RSA signature itself (measured, docs/benchmarks-history.md).
 * Verified in the tests by mailauth, an independent implementation.
 */
export function dkimSignMessage(raw: string, key: DkimKey): string {
  // Signed as it will travel: SMTP sends every line end as CRLF (smtp-session.ts), and a receiver hashes that.
  // nodemailer's composer leaves the line ends of a caller's text and HTML as given, so a transactional mail
  // with Cc or attachments and `\n` in its body failed DKIM until the message was made CRLF before signing.
  const crlf = raw.replace(/\r\n|\r|\n/g, '\r\n')
  const end = crlf.indexOf('\r\n\r\n')
  const head = end < 0 ? crlf : crlf.slice(0, end)
  const body = end < 0 ? '' : crlf.slice(end + 4)
  return `${dkimSignatureField(head, body, key)}${crlf}`
}

/**
 * The DKIM-Signature header field (with its line end) of a message given as its header block (without the
 * blank line) and its body: what dkimSignMessage puts on top. A message built in pieces is signed without
 * first being joined into one string, then searched and sliced again (issue 11: every copy of a 12 KB message
 * is garbage a signing thread collects).
 *
 * `ownQp`: the body is made of our quoted-printable (quoted-printable.ts) and MIME lines of ours, so it has no
 * tab, no run of spaces and no space at a line end, and of relaxed canonicalisation only the end applies.
 */
export function dkimSignatureField(head: string, body: string, key: DkimKey, ownQp = false): string {
  const relaxed = ownQp ? relaxedEnd(body) : relaxedBody(body)
  const bodyHash = createHash('sha256').update(relaxed, 'utf8').digest('base64')

  // Each header field (continuation lines included) by name; a name signed twice would take them from the
  // bottom up (RFC 6376 §5.4.2), but we list each name once, so the last instance is the one signed.
  const fields = new Map<string, string>()
  for (const field of head.split(/\r\n(?![ \t])/)) {
    const colon = field.indexOf(':')
    if (colon > 0) fields.set(field.slice(0, colon).trim().toLowerCase(), field.slice(colon + 1))
  }
  const names = SIGNED_NAMES.filter((n) => fields.has(n))
  const tags =
    `v=1; a=rsa-sha256; c=relaxed/relaxed;\r\n d=${key.domainName}; q=dns/txt; s=${key.keySelector};\r\n` +
    ` bh=${bodyHash};\r\n h=${namesTag(names)};\r\n b=`
  const signedData =
    names.map((n) => relaxedHeader(n, fields.get(n)!)).join('') +
    relaxedHeader('dkim-signature', tags).replace(/\r\n$/, '')
  const signature = sign('sha256', Buffer.from(signedData, 'utf8'), signingKey(key.privateKey)).toString(
    'base64',
  )
  return `DKIM-Signature: ${tags}${folded(signature)}\r\n`
}
