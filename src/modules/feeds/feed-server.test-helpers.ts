import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after } from 'node:test'

/** What a path answers: a body (with a content type), or a handler writing the answer itself. */
export type FeedAnswer =
  { status?: number; type?: string; body: string } | ((res: http.ServerResponse) => void | Promise<void>)

export interface FeedServer {
  url(path: string): string
  serve(path: string, answer: FeedAnswer): void
  /** Requests seen per path. */
  hits(path: string): number
  close(): Promise<void>
}

/** A real HTTP server on 127.0.0.1 serving feed files as scripted; unscripted paths answer 404. */
export async function startFeedServer(): Promise<FeedServer> {
  const answers = new Map<string, FeedAnswer>()
  const hits = new Map<string, number>()
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/'
    hits.set(path, (hits.get(path) ?? 0) + 1)
    const answer = answers.get(path)
    if (!answer) return void res.writeHead(404).end('no such feed')
    if (typeof answer === 'function') {
      void Promise.resolve(answer(res)).catch(() => res.destroy())
      return
    }
    res.writeHead(answer.status ?? 200, { 'content-type': answer.type ?? 'application/xml' }).end(answer.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  after(close)
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    serve: (path, answer) => void answers.set(path, answer),
    hits: (path) => hits.get(path) ?? 0,
    close,
  }
}

export interface TestItem {
  id: string
  title: string
  price?: string
  category?: string
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

export function heurekaItem(it: TestItem): string {
  return (
    `<SHOPITEM><ITEM_ID>${esc(it.id)}</ITEM_ID><PRODUCTNAME>${esc(it.title)}</PRODUCTNAME>` +
    `<URL>https://shop.example/p/${esc(it.id)}</URL><IMGURL>https://shop.example/i/${esc(it.id)}.jpg</IMGURL>` +
    `<PRICE_VAT>${it.price ?? '100'}</PRICE_VAT><CATEGORYTEXT>${esc(it.category ?? 'Home | Kitchen')}</CATEGORYTEXT>` +
    `<MANUFACTURER>Acme</MANUFACTURER></SHOPITEM>\n`
  )
}

export const heurekaFeed = (items: TestItem[]) =>
  `<?xml version="1.0" encoding="utf-8"?>\n<SHOP>\n${items.map(heurekaItem).join('')}</SHOP>\n`

export const googleRss = (items: TestItem[]) =>
  `<?xml version="1.0"?>\n<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0"><channel><title>Shop</title>` +
  items
    .map(
      (it) =>
        `<item><g:id>${esc(it.id)}</g:id><title>${esc(it.title)}</title><link>https://shop.example/p/${esc(it.id)}</link>` +
        `<g:image_link>https://shop.example/i/${esc(it.id)}.jpg</g:image_link><g:price>${it.price ?? '100'} CZK</g:price>` +
        `<g:product_type>${esc((it.category ?? 'Home | Kitchen').replace(/\|/g, '>'))}</g:product_type></item>`,
    )
    .join('') +
  `</channel></rss>\n`

export const googleAtom = (items: TestItem[]) =>
  `<?xml version="1.0"?>\n<feed xmlns="http://www.w3.org/2005/Atom" xmlns:g="http://base.google.com/ns/1.0"><title>Shop</title>` +
  items
    .map(
      (it) =>
        `<entry><g:id>${esc(it.id)}</g:id><title>${esc(it.title)}</title>` +
        `<link rel="alternate" href="https://shop.example/p/${esc(it.id)}"/><g:price>${it.price ?? '100'} CZK</g:price></entry>`,
    )
    .join('') +
  `</feed>\n`

export const csvFeed = (items: TestItem[], delimiter = ';') =>
  [
    ['ID', 'Title', 'URL', 'Image', 'Price', 'Category'].join(delimiter),
    ...items.map((it) =>
      [
        it.id,
        `"${it.title.replace(/"/g, '""')}"`,
        `https://shop.example/p/${it.id}`,
        `https://shop.example/i/${it.id}.jpg`,
        `"${it.price ?? '100'}"`,
        it.category ?? 'Home | Kitchen',
      ].join(delimiter),
    ),
  ].join('\n') + '\n'

/**
 * Streams a Heureka feed of `n` generated items, written as the socket takes it (never held whole); stops when
 * the client goes. `tiny` items carry only their id (what a test of the item count needs, and cheap to read and
 * stage). Resolves with the number of items written.
 */
export async function streamHeureka(
  res: http.ServerResponse,
  n: number,
  opts: { tiny?: boolean } = {},
): Promise<number> {
  res.writeHead(200, { 'content-type': 'application/xml' })
  res.write('<?xml version="1.0" encoding="utf-8"?>\n<SHOP>\n')
  const PER_WRITE = 500
  let written = 0
  for (let i = 0; i < n && !res.destroyed; i += PER_WRITE) {
    let chunk = ''
    for (let j = i; j < Math.min(n, i + PER_WRITE); j++)
      chunk += opts.tiny
        ? `<SHOPITEM><ITEM_ID>P${j}</ITEM_ID></SHOPITEM>\n`
        : heurekaItem({ id: `P${j}`, title: `Product ${j}`, price: `${(j % 1000) + 0.5}` })
    written = Math.min(n, i + PER_WRITE)
    if (!res.write(chunk))
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done)
          res.off('close', done)
          resolve()
        }
        res.on('drain', done)
        res.on('close', done)
      })
  }
  if (!res.destroyed) res.end('</SHOP>\n')
  return written
}
