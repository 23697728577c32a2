import { Readable } from 'node:stream'
import { CsvError, parse } from 'csv-parse'
import {
  clean,
  extraOf,
  FeedParseError,
  parsePrice,
  splitCategories,
  type FeedProduct,
} from './feed-product.js'

/**
 * CSV feeds: a header row names the columns (common aliases of id, title, url, image, price and category
 * are understood, case and punctuation aside); `,`, `;` or tab is detected from the header line. Parsed as
 * a stream by csv-parse, yielded in batches.
 */

const ALIASES = {
  id: ['id', 'itemid', 'productid', 'code', 'sku', 'gid'],
  title: ['title', 'name', 'productname', 'product', 'gtitle'],
  url: ['url', 'link', 'producturl', 'glink'],
  image: ['image', 'imagelink', 'imgurl', 'imageurl', 'img', 'gimagelink'],
  price: ['price', 'pricevat', 'gprice', 'saleprice'],
  categories: [
    'category',
    'categories',
    'categorytext',
    'producttype',
    'gproducttype',
    'googleproductcategory',
  ],
} as const

const BATCH = 500

/** `Item ID` → `itemid`, `g:image_link` → `gimagelink`. */
const normalise = (header: string) => header.toLowerCase().replace(/[^a-z0-9]/g, '')

/** The delimiter used most in the header line. */
export function detectDelimiter(head: string): string {
  const line = head.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0] ?? ''
  const counts = [',', ';', '\t'].map((d) => ({ d, n: line.split(d).length - 1 }))
  counts.sort((a, b) => b.n - a.n)
  return counts[0]!.n > 0 ? counts[0]!.d : ','
}

function columnFor(headers: string[], aliases: readonly string[]): string | undefined {
  for (const a of aliases) if (headers.includes(a)) return a
  return undefined
}

export async function* parseCsvFeed(
  chunks: AsyncIterable<Buffer>,
  head: Buffer,
): AsyncGenerator<FeedProduct[]> {
  const parser = parse({
    delimiter: detectDelimiter(head.subarray(0, 64 * 1024).toString('utf8')),
    bom: true,
    columns: (header: string[]) => header.map((h) => normalise(String(h))),
    relax_column_count: true,
    // A quote inside an unquoted field is kept as it is: an inch mark in a title (`27" monitor`) is common in
    // shops' hand-made exports, and refusing the whole feed for it helps no one.
    relax_quotes: true,
    skip_empty_lines: true,
    trim: true,
    max_record_size: 1024 * 1024,
  })
  const source = Readable.from(chunks)
  source.on('error', (err) => parser.destroy(err))
  source.pipe(parser)

  let columns: Record<keyof typeof ALIASES, string | undefined> | undefined
  let out: FeedProduct[] = []
  try {
    for await (const record of parser as AsyncIterable<Record<string, string>>) {
      if (!columns) {
        const headers = Object.keys(record)
        columns = {
          id: columnFor(headers, ALIASES.id),
          title: columnFor(headers, ALIASES.title),
          url: columnFor(headers, ALIASES.url),
          image: columnFor(headers, ALIASES.image),
          price: columnFor(headers, ALIASES.price),
          categories: columnFor(headers, ALIASES.categories),
        }
        if (!columns.id)
          throw new FeedParseError('The CSV feed has no id column (id, item_id, product_id, code, sku)')
      }
      const fields = new Map<string, string>()
      for (const [k, v] of Object.entries(record)) if (typeof v === 'string') fields.set(k, clean(v))
      const id = fields.get(columns.id!)
      if (!id) continue
      const get = (c: string | undefined) => (c ? (fields.get(c) ?? '') : '')
      out.push({
        id,
        title: get(columns.title),
        url: get(columns.url),
        image: get(columns.image),
        price: parsePrice(get(columns.price)),
        categories: splitCategories(get(columns.categories)),
        extra: extraOf(fields, new Set(Object.values(columns).filter((c): c is string => !!c))),
      })
      if (out.length >= BATCH) {
        yield out
        out = []
      }
    }
  } catch (err) {
    // Every csv-parse error is the file's fault; by class, as their codes do not all start with CSV_ (its
    // INVALID_OPENING_QUOTE was a 500 on refresh).
    if (!(err instanceof CsvError)) throw err
    throw new FeedParseError(`The CSV feed is malformed: ${(err as Error).message}`)
  } finally {
    source.destroy()
  }
  if (out.length) yield out
}
