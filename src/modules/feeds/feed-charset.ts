/**
 * Which charset a feed's bytes are in, where the file does not say it itself (an XML declaration does; a CSV
 * file never does): a byte-order mark, then the bytes themselves, then the HTTP `Content-Type` charset, then
 * windows-1250, the charset of the Czech shop exports that are not UTF-8.
 */

/** The charset a byte-order mark at the start names, if any. */
export function bomCharset(head: Buffer): 'utf-8' | 'utf-16le' | 'utf-16be' | undefined {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8'
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le'
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be'
  return undefined
}

/** The `charset` of a Content-Type header when TextDecoder knows it (a label it does not know is ignored). */
export function contentTypeCharset(contentType: string | undefined): string | undefined {
  const label = /;\s*charset\s*=\s*"?([A-Za-z0-9._:-]+)"?/i.exec(contentType ?? '')?.[1]
  if (!label) return undefined
  try {
    return new TextDecoder(label).encoding
  } catch {
    return undefined
  }
}

/**
 * The charset of a file that names none, from its first bytes: UTF-8 when they hold a character beyond ASCII
 * and read as UTF-8 (a header saying otherwise is a server's default, wrong here: windows-1250 text is almost
 * never valid UTF-8), else the HTTP charset, else UTF-8 when they read as it, else windows-1250.
 */
export function guessCharset(head: Buffer, httpCharset: string | undefined): string {
  const utf8 = readsAsUtf8(head)
  if (utf8 && head.some((b) => b >= 0x80)) return 'utf-8'
  return httpCharset ?? (utf8 ? 'utf-8' : 'windows-1250')
}

function readsAsUtf8(head: Buffer): boolean {
  try {
    // stream: a character cut at the end of the head is not an error.
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true })
    return true
  } catch {
    return false
  }
}

/** The chunks as UTF-8 bytes, decoded from `charset` (a byte-order mark dropped), for readers that take UTF-8. */
export async function* transcodeToUtf8(
  chunks: AsyncIterable<Buffer>,
  charset: string,
): AsyncGenerator<Buffer> {
  const decoder = new TextDecoder(charset)
  for await (const chunk of chunks) {
    const text = decoder.decode(chunk, { stream: true })
    if (text) yield Buffer.from(text, 'utf8')
  }
  const rest = decoder.decode()
  if (rest) yield Buffer.from(rest, 'utf8')
}
