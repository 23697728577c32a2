import { Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'
import { OutboundError } from '../../core/net/outbound.js'
import { FeedParseError } from './feed-product.js'

/**
 * Shops often publish feeds gzipped (`feed.xml.gz`). A body starting with the gzip magic bytes is inflated as
 * a stream; `maxBytes` bounds the inflated size too, so a small file cannot unpack into an unbounded one.
 * Anything else passes through untouched.
 */
export async function* gunzipIfCompressed(
  chunks: AsyncIterable<Buffer>,
  maxBytes: number,
): AsyncGenerator<Buffer> {
  const it = chunks[Symbol.asyncIterator]()
  // The two magic bytes may come in chunks of one.
  let head: Buffer = Buffer.alloc(0)
  while (head.length < 2) {
    const next = await it.next()
    if (next.done) break
    head = head.length ? Buffer.concat([head, next.value]) : next.value
  }
  if (head.length === 0) return
  async function* all(): AsyncGenerator<Buffer> {
    yield head
    for (let n = await it.next(); !n.done; n = await it.next()) yield n.value
  }
  if (head.length < 2 || head[0] !== 0x1f || head[1] !== 0x8b) {
    yield* all()
    return
  }
  const source = Readable.from(all())
  const gunzip = createGunzip()
  source.on('error', (err) => gunzip.destroy(err))
  source.pipe(gunzip)
  let size = 0
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size > maxBytes) throw new OutboundError('too_large', `the feed inflates past ${maxBytes} bytes`)
      yield chunk
    }
  } catch (err) {
    const code = (err as { code?: unknown }).code
    if (typeof code === 'string' && code.startsWith('Z_'))
      throw new FeedParseError(`The feed is not valid gzip: ${(err as Error).message}`)
    throw err
  } finally {
    source.destroy()
    gunzip.destroy()
  }
}
