import MimeNode from 'nodemailer/lib/mime-node/index.js'
import { encodeWord, foldLines } from 'nodemailer/lib/mime-funcs/index.js'

/** MimeNode's own encoder of one header value (public in nodemailer, missing from its types). */
export interface HeaderEncoder {
  encodeHeaderValue(key: string, value: unknown): string
  _normalizeHeaderKey(key: string): string
  _normalizeAddress(address: string): string
}

export const headerEncoder = new MimeNode() as unknown as HeaderEncoder

/**
 * One header line as MimeNode.buildHeaders writes it, always through MimeNode's encoder: the value encoded, folded
 * at 76 columns; '' when empty. What headerLine falls back to, and what the tests hold plainHeaderLine to.
 */
export function mimeHeaderLine(key: string, value: unknown): string {
  const encoded = headerEncoder.encodeHeaderValue(key, value)
  return encoded.trim() ? foldLines(`${key}: ${encoded}`, 76) : ''
}

/** Fields MimeNode encodes by rules of their own (addresses, ids, dates, parameters), by lower-cased name. */
const STRUCTURED = new Set(
  [
    'From',
    'Sender',
    'To',
    'Cc',
    'Bcc',
    'Reply-To',
    'Message-ID',
    'In-Reply-To',
    'Content-ID',
    'OTP-Token',
    'References',
    'Date',
    'Content-Type',
    'Content-Disposition',
  ].map((k) => k.toLowerCase()),
)

/** A field name as MimeNode writes it (normalKey in raw-message.ts): letters, digits and hyphens. */
const PLAIN_NAME = /^[A-Za-z0-9-]+$/
/** Printable ASCII without the double quote: unstructured text MimeNode leaves as it is. */
const PLAIN_TEXT = /^[\x20\x21\x23-\x7e]*$/
/** A message id in angle brackets, printable ASCII without spaces: MimeNode leaves it as it is. */
const PLAIN_ID = /^<[\x21-\x7e]*>$/
/** A display name MimeNode writes bare (its own test, mime-node `_encodeAddressName`). */
const BARE_NAME = /^[\w ]*$/
/** An ASCII dot-atom local part at a host name: an address MimeNode writes bare once its host is normalised. */
const PLAIN_ADDRESS =
  /^([A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+(?:\.[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+)*)@([A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)$/

/** Host names as MimeNode normalises them (lower case, punycode), by host; bounded. */
const hosts = new Map<string, string | null>()
const HOSTS_MAX = 4096

/** The host as MimeNode writes it after an ASCII local part, or null when it would write it some other way. */
function normalHost(host: string): string | null {
  let normal = hosts.get(host)
  if (normal === undefined) {
    const address = headerEncoder._normalizeAddress(`a@${host}`)
    normal = address.startsWith('a@') ? address.slice(2) : null
    if (hosts.size >= HOSTS_MAX) hosts.clear()
    hosts.set(host, normal)
  }
  return normal
}

/** One recipient as MimeNode writes it (`Name <a@host>` or `a@host`), or undefined when it is not that plain. */
function plainAddressee(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length !== 1) return undefined
  const a = value[0] as { name?: unknown; address?: unknown; group?: unknown } | null
  if (!a || typeof a.name !== 'string' || typeof a.address !== 'string' || a.group !== undefined)
    return undefined
  const m = PLAIN_ADDRESS.exec(a.address)
  if (!m || !BARE_NAME.test(a.name)) return undefined
  const host = normalHost(m[2]!)
  if (host === null) return undefined
  const address = `${m[1]}@${host}`
  return a.name ? `${a.name} <${address}>` : address
}

/**
 * The line mimeHeaderLine would make, made without MimeNode's encoder when the value is plain: unstructured
 * ASCII text, a message id, or one recipient with a plain name and address (a campaign's To, Subject,
 * Message-ID and List-Unsubscribe). Undefined for anything else. The encoder parses and normalises each
 * address twice and tests each value with several expressions: those four lines took 9.3-9.6 µs of a
 * signing thread per campaign message, now 3.0-3.7, and a message's work besides RSA fell from 63-69 µs to
 * 56-58 (microbenchmarks, issue 11). Checked against mimeHeaderLine in the tests, on generated values around
 * every rule here.
 */
export function plainHeaderLine(key: string, value: unknown): string | undefined {
  if (!PLAIN_NAME.test(key)) return undefined
  const name = key.toLowerCase()
  let encoded: string | undefined
  if (!STRUCTURED.has(name)) {
    // MimeNode encodes a value holding `=?`, which would otherwise read as an encoded word.
    if (typeof value === 'string' && PLAIN_TEXT.test(value) && !value.includes('=?')) encoded = value
  } else if (key === 'Message-ID') {
    if (typeof value === 'string' && PLAIN_ID.test(value)) encoded = value
  } else if (key === 'To') {
    encoded = plainAddressee(value)
  }
  if (encoded === undefined) return undefined
  if (!encoded.trim()) return ''
  const line = `${key}: ${encoded}`
  // foldLines leaves a line shorter than its width as it is.
  return line.length < 76 ? line : foldLines(line, 76)
}

/** RFC 5322 §2.1.1: no line of a message may pass 998 characters (relays break longer ones, and DKIM with them). */
const MAX_LINE = 998

/**
 * One header line as MimeNode.buildHeaders writes it: plainHeaderLine when the value is plain, else
 * mimeHeaderLine. Except where that would pass MAX_LINE: folding breaks only at spaces, so unstructured text
 * with a longer run without one (a subject of 998 `x`, a long merge value) came out as one line of 999 or more;
 * it goes as encoded words then, which fold.
 */
export function headerLine(key: string, value: unknown): string {
  const line = plainHeaderLine(key, value) ?? mimeHeaderLine(key, value)
  if (line.length <= MAX_LINE || line.split('\r\n').every((l) => l.length <= MAX_LINE)) return line
  if (typeof value === 'string' && !STRUCTURED.has(key.toLowerCase()))
    return foldLines(`${key}: ${encodeWord(value, 'Q', 52)}`, 76)
  return addressesWithWords(key, value) ?? line
}

/** Fields of addressees (`{name, address}`, one or a list) whose names may be written as encoded words. */
const ADDRESS_FIELDS = new Set(['from', 'sender', 'to', 'cc', 'bcc', 'reply-to'])

/**
 * An address field whose display names are encoded words, which fold: MimeNode writes an ASCII name as it is,
 * and a name of up to 1,000 characters without a blank (the transactional schema's limit) made a line of more
 * than 998. Undefined for a value that is not addressees.
 */
function addressesWithWords(key: string, value: unknown): string | undefined {
  if (!ADDRESS_FIELDS.has(key.toLowerCase())) return undefined
  const list: unknown[] = Array.isArray(value) ? value : [value]
  const written: string[] = []
  for (const a of list) {
    const { name, address } = (a ?? {}) as { name?: unknown; address?: unknown }
    if (typeof address !== 'string' || (name !== undefined && typeof name !== 'string')) return undefined
    const normal = headerEncoder._normalizeAddress(address)
    written.push(name ? `${encodeWord(name, 'Q', 52)} <${normal}>` : normal)
  }
  return foldLines(`${key}: ${written.join(', ')}`, 76)
}
