import type { FeedFormat } from './feeds.table.js'
import { bomCharset, guessCharset, transcodeToUtf8 } from './feed-charset.js'
import { parseCsvFeed } from './feed-csv.js'
import { FeedParseError, type FeedProduct } from './feed-product.js'
import { parseXmlFeed } from './feed-xml.js'

/**
 * A feed file's products, in batches, from its downloaded chunks. The format given on the feed picks the
 * reader (heureka and google: XML, whose root element then tells which; csv: CSV); without one, the first
 * character that is not a byte-order mark or white space decides: `<` is XML, anything else CSV. `httpCharset`
 * is the download's Content-Type charset: what a file that names none is read in, unless it reads as UTF-8
 * (feed-charset.ts). A UTF-16 file (by its byte-order mark) is read as UTF-8 once transcoded.
 */
const HEAD_MIN = 1024
const HEAD_MAX = 64 * 1024

export async function* parseFeed(
  chunks: AsyncIterable<Buffer>,
  given: FeedFormat | null,
  found: (format: FeedFormat) => void,
  httpCharset?: string,
): AsyncGenerator<FeedProduct[]> {
  const it = chunks[Symbol.asyncIterator]()
  const head: Buffer[] = []
  // The head: the first KiB at least (where an XML declaration names its charset), and further until a byte
  // that is not white space, within 64 KiB.
  let seen = 0
  let first: number | undefined
  while (seen < HEAD_MAX && (seen < HEAD_MIN || first === undefined)) {
    const next = await it.next()
    if (next.done) break
    head.push(next.value)
    seen += next.value.length
    if (first === undefined) first = firstSignificantByte(Buffer.concat(head))
  }
  const raw = Buffer.concat(head)
  /** The head as the readers below see it: transcoded along with the file where it is. */
  let headBuf = raw
  async function* all(): AsyncGenerator<Buffer> {
    yield raw
    for (let n = await it.next(); !n.done; n = await it.next()) yield n.value
  }
  let source: AsyncIterable<Buffer> = all()
  const bom = bomCharset(headBuf)
  const utf16 = bom === 'utf-16le' || bom === 'utf-16be'
  if (utf16) {
    source = transcodeToUtf8(source, bom)
    headBuf = Buffer.from(new TextDecoder(bom).decode(headBuf), 'utf8')
    first = firstSignificantByte(headBuf)
  }
  if (first === undefined) throw new FeedParseError('The feed is empty')
  const xml = given ? given !== 'csv' : first === 0x3c
  if (xml) {
    // A UTF-16 file's declaration names UTF-16, but what the parser reads is UTF-8 now.
    yield* parseXmlFeed(source, found, utf16 ? { charset: 'utf-8' } : { fallback: httpCharset })
  } else {
    found('csv')
    const charset = utf16 || bom === 'utf-8' ? 'utf-8' : guessCharset(headBuf, httpCharset)
    if (charset !== 'utf-8') {
      source = transcodeToUtf8(source, charset)
      headBuf = Buffer.from(new TextDecoder(charset).decode(headBuf), 'utf8')
    }
    yield* parseCsvFeed(source, headBuf)
  }
}

function firstSignificantByte(buf: Buffer): number | undefined {
  let i = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0
  while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x0a || buf[i] === 0x0d || buf[i] === 0x09)) i++
  return i < buf.length ? buf[i] : undefined
}
