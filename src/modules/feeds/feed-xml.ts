import { SaxesParser, type SaxesTagNS } from 'saxes'
import { guessCharset } from './feed-charset.js'
import type { FeedFormat } from './feeds.table.js'
import {
  clean,
  extraOf,
  FeedParseError,
  firstOf,
  MAX_FIELD_CHARS,
  parsePrice,
  splitCategories,
  type FeedProduct,
} from './feed-product.js'

/**
 * Heureka XML (`SHOP/SHOPITEM`) and Google Merchant feeds (RSS 2.0 `rss/channel/item`, Atom `feed/entry`)
 * read as a stream with saxes: the root element tells which, each item's direct child elements are its
 * fields, and products come out a downloaded chunk at a time, so memory holds one chunk's items at most.
 */

const GOOGLE_NS = 'http://base.google.com/ns/1.0'

interface FieldNames {
  id: readonly string[]
  title: readonly string[]
  url: readonly string[]
  image: readonly string[]
  price: readonly string[]
  categories: readonly string[]
}

const HEUREKA: FieldNames = {
  id: ['ITEM_ID'],
  title: ['PRODUCTNAME', 'PRODUCT'],
  url: ['URL'],
  image: ['IMGURL'],
  price: ['PRICE_VAT', 'PRICE'],
  categories: ['CATEGORYTEXT'],
}

const GOOGLE: FieldNames = {
  id: ['g:id', 'id'],
  title: ['g:title', 'title'],
  url: ['g:link', 'link'],
  image: ['g:image_link'],
  price: ['g:price', 'g:sale_price'],
  categories: ['g:product_type', 'g:google_product_category'],
}

interface Dialect {
  format: FeedFormat
  item: string
  names: FieldNames
}

function dialectOf(root: string): Dialect {
  switch (root.toLowerCase()) {
    case 'shop':
      return { format: 'heureka', item: 'SHOPITEM', names: HEUREKA }
    case 'rss':
      return { format: 'google', item: 'item', names: GOOGLE }
    case 'feed':
      return { format: 'google', item: 'entry', names: GOOGLE }
    default:
      throw new FeedParseError(
        `The XML root element <${root}> is neither a Heureka SHOP nor a Google Merchant rss or feed`,
      )
  }
}

const usedSets = new WeakMap<FieldNames, ReadonlySet<string>>()
/** The field names a dialect maps to product columns (the rest goes to `extra`), computed once. */
function usedBy(names: FieldNames): ReadonlySet<string> {
  let used = usedSets.get(names)
  if (!used) usedSets.set(names, (used = new Set(Object.values(names).flat())))
  return used
}

export function productOf(fields: Map<string, string>, names: FieldNames): FeedProduct | undefined {
  const id = firstOf(fields, names.id)
  if (!id) return undefined
  return {
    id,
    title: firstOf(fields, names.title),
    url: firstOf(fields, names.url),
    image: firstOf(fields, names.image),
    price: parsePrice(firstOf(fields, names.price)),
    categories: splitCategories(firstOf(fields, names.categories)),
    extra: extraOf(fields, usedBy(names)),
  }
}

/**
 * How the bytes are read: as `charset` when given; else in the charset the XML declaration at the start names
 * (a file's own word wins over a server's header, often a default); else as guessCharset reads one that names
 * none (UTF-8, or the HTTP charset, `fallback`).
 */
export interface XmlCharset {
  charset?: string | undefined
  fallback?: string | undefined
}

function decoderFor(head: Buffer, given: XmlCharset): TextDecoder {
  const decl = /^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(
    head.subarray(0, 200).toString('latin1'),
  )
  const label = given.charset ?? decl?.[1] ?? guessCharset(head, given.fallback)
  try {
    return new TextDecoder(label)
  } catch {
    throw new FeedParseError(`The feed's encoding "${label}" is not supported`)
  }
}

/** The products of an XML feed, a batch per downloaded chunk; `found` learns the format at the root element. */
export async function* parseXmlFeed(
  chunks: AsyncIterable<Buffer>,
  found: (format: FeedFormat) => void,
  charset: XmlCharset = {},
): AsyncGenerator<FeedProduct[]> {
  const parser = new SaxesParser({ xmlns: true })
  let decoder: TextDecoder | undefined
  let dialect: Dialect | undefined
  let depth = 0
  /** Depth of the open item element, 0 outside one. */
  let itemDepth = 0
  let fields = new Map<string, string>()
  let field: string | undefined
  let text = ''
  let out: FeedProduct[] = []

  const keyOf = (tag: SaxesTagNS) => (tag.uri === GOOGLE_NS ? `g:${tag.local}` : tag.local)
  const onText = (t: string) => {
    // Only a field's own text: nested elements (Heureka PARAM, DELIVERY) are not flattened into it.
    if (field !== undefined && depth === itemDepth + 1 && text.length < MAX_FIELD_CHARS) text += t
  }
  parser.on('opentag', (tag) => {
    depth++
    if (!dialect) {
      dialect = dialectOf(tag.local)
      found(dialect.format)
      return
    }
    if (itemDepth === 0) {
      if (tag.local === dialect.item) {
        itemDepth = depth
        fields = new Map()
      }
      return
    }
    if (depth !== itemDepth + 1) return
    field = keyOf(tag)
    text = ''
    // Atom's <link href="..."/> holds its value in an attribute; the alternate (or only) link is the page.
    const href = tag.attributes.href?.value
    const rel = tag.attributes.rel?.value
    if (field === 'link' && href && (!rel || rel === 'alternate')) text = href
  })
  parser.on('text', onText)
  parser.on('cdata', onText)
  parser.on('closetag', () => {
    if (itemDepth && depth === itemDepth + 1 && field !== undefined) {
      const value = clean(text)
      if (value && !fields.has(field)) fields.set(field, value)
      field = undefined
    } else if (itemDepth && depth === itemDepth && dialect) {
      const product = productOf(fields, dialect.names)
      if (product) out.push(product)
      itemDepth = 0
    }
    depth--
  })

  const write = (s: string) => {
    try {
      parser.write(s)
    } catch (err) {
      if (err instanceof FeedParseError) throw err
      throw new FeedParseError(`The feed is not well-formed XML: ${(err as Error).message}`)
    }
  }
  // White space before the declaration (PHP exports often start with a line break) is not XML, strictly, and
  // saxes refuses it; no reader of feeds does, so it is dropped, with a byte-order mark, before the first `<`.
  let started = false
  for await (const chunk of chunks) {
    decoder ??= decoderFor(chunk, charset)
    let text = decoder.decode(chunk, { stream: true })
    if (!started) {
      text = text.replace(/^[\uFEFF\s]+/, '')
      started = text.length > 0
    }
    write(text)
    if (out.length) {
      yield out
      out = []
    }
  }
  write((decoder ?? new TextDecoder()).decode())
  try {
    parser.close()
  } catch (err) {
    throw new FeedParseError(`The feed is not well-formed XML: ${(err as Error).message}`)
  }
  if (!dialect) throw new FeedParseError('The feed holds no XML element')
  if (out.length) yield out
}
