import type { FeedFormat } from './feeds.table.js'
import { parseCsvFeed } from './feed-csv.js'
import { FeedParseError, type FeedProduct } from './feed-product.js'
import { parseXmlFeed } from './feed-xml.js'

/**
 * A feed file's products, in batches, from its downloaded chunks. The format given on the feed picks the
 * reader (heureka and google: XML, whose root element then tells which; csv: CSV); without one, the first
 * byte that is not a byte-order mark or white space decides: `<` is XML, anything else CSV.
 */
const HEAD_MIN = 1024
const HEAD_MAX = 64 * 1024

export async function* parseFeed(
  chunks: AsyncIterable<Buffer>,
  given: FeedFormat | null,
  found: (format: FeedFormat) => void,
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
  if (first === undefined) throw new FeedParseError('The feed is empty')
  const headBuf = Buffer.concat(head)
  async function* all(): AsyncGenerator<Buffer> {
    yield headBuf
    for (let n = await it.next(); !n.done; n = await it.next()) yield n.value
  }
  const xml = given ? given !== 'csv' : first === 0x3c
  if (xml) {
    yield* parseXmlFeed(all(), found)
  } else {
    found('csv')
    yield* parseCsvFeed(all(), headBuf)
  }
}

function firstSignificantByte(buf: Buffer): number | undefined {
  let i = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0
  while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x0a || buf[i] === 0x0d || buf[i] === 0x09)) i++
  return i < buf.length ? buf[i] : undefined
}
