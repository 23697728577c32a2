/**
 * Quoted-printable body encoding (RFC 2045 §6.7) for text parts, in one pass over the string.
 *
 * Every campaign message encodes its whole HTML and text parts; nodemailer's encoder (a byte loop, then a
 * regular-expression wrapper over the result) took about a third of a signing thread's time before the RSA
 * signature. This one copies runs of safe characters as slices and wraps as it goes. Line ends of any kind
 * (CRLF, CR, LF) become CRLF hard breaks; lines are wrapped with soft breaks (`=` CRLF) at 76 columns; a space
 * before a hard break or at the end is encoded; non-ASCII characters are their UTF-8 bytes as `=XX`, never
 * split across a soft break.
 *
 * Tabs, and a space right after a space, are encoded too (`=09`, `=20`): the result then has no run of blanks,
 * no tab and no blank at a line end, so it is its own DKIM "relaxed" form (RFC 6376 §3.4.4) and a signer hashes
 * the body as written rather than canonicalising 10 KB of it with three regular-expression passes first.
 *
 * A dot that would start a line is encoded too (`=2E`): no line of the result starts with one, so SMTP needs no
 * dot-stuffing for it (RFC 5321 §4.5.2) and the relay writes the message as it is (raw-message.ts, `dataSafe`).
 */
const MAX = 75 // characters before the soft break's `=`: lines of at most 76

const HEX = Array.from({ length: 256 }, (_, b) => `=${b.toString(16).toUpperCase().padStart(2, '0')}`)

/** Printable ASCII but `=`, and space (encoded before a line end, and after a space): copied as they are. */
const SAFE = new Uint8Array(128)
for (let c = 33; c <= 126; c++) SAFE[c] = 1
SAFE[61] = 0 // '='
SAFE[32] = 1

/** The same characters as SAFE, as a sticky pattern: finds where a run of them ends without a loop in JS. */
const SAFE_RUN = /[\x20-\x3c\x3e-\x7e]*/y

const SPACE = 32
const DOT = 46

const utf8 = new TextEncoder()

function encodedChar(code: number, text: string, i: number): { s: string; width: number } {
  if (code < 128) return { s: HEX[code]!, width: 1 }
  const cp = text.codePointAt(i)!
  const width = cp > 0xffff ? 2 : 1
  let s = ''
  for (const b of utf8.encode(String.fromCodePoint(cp))) s += HEX[b]
  return { s, width }
}

export function qpEncodeText(text: string): string {
  let out = ''
  let col = 0
  const n = text.length
  let i = 0
  const room = (width: number) => {
    if (col + width > MAX) {
      out += '=\r\n'
      col = 0
    }
  }
  // Where the next two spaces in a row start (searched again only once passed: linear, however many runs).
  let pair = text.indexOf('  ')
  while (i < n) {
    const code = text.charCodeAt(i)
    if (code === 13 || code === 10) {
      out += '\r\n'
      col = 0
      i += code === 13 && text.charCodeAt(i + 1) === 10 ? 2 : 1
      continue
    }
    const afterSpace = code === SPACE && i > 0 && text.charCodeAt(i - 1) === SPACE
    if (code < 128 && SAFE[code] === 1 && !afterSpace) {
      SAFE_RUN.lastIndex = i
      SAFE_RUN.test(text)
      let end = SAFE_RUN.lastIndex
      if (pair >= 0 && pair < i) pair = text.indexOf('  ', i)
      // The run stops before a space that follows a space: that one is encoded.
      if (pair >= 0 && pair + 1 < end) end = pair + 1
      // A space right before a line end (or the end of the text) must be encoded.
      const next = end < n ? text.charCodeAt(end) : 13
      const last = text.charCodeAt(end - 1)
      const trailing = (next === 13 || next === 10) && last === SPACE
      if (trailing) end--
      while (i < end) {
        room(1)
        if (col === 0 && text.charCodeAt(i) === DOT) {
          out += HEX[DOT]!
          col = 3
          i++
          continue
        }
        const take = Math.min(end - i, MAX - col)
        out += text.slice(i, i + take)
        col += take
        i += take
      }
      if (trailing) {
        room(3)
        out += HEX[last]!
        col += 3
        i++
      }
      continue
    }
    const { s, width } = encodedChar(code, text, i)
    room(s.length)
    out += s
    col += s.length
    i += width
  }
  return out
}
