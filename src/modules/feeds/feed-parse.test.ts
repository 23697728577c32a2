import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'
import { gunzipIfCompressed } from './feed-gunzip.js'
import { parseFeed } from './feed-parse.js'
import {
  FeedParseError,
  MAX_FIELD_CHARS,
  parsePrice,
  splitCategories,
  type FeedProduct,
} from './feed-product.js'
import type { FeedFormat } from './feeds.table.js'
import { csvFeed, googleAtom, googleRss, heurekaFeed } from './feed-server.test-helpers.js'

/** The body cut into `size`-byte chunks, so every boundary (inside tags, characters, quotes) is crossed. */
async function* chunks(body: string | Buffer, size: number): AsyncGenerator<Buffer> {
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body)
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size)
}

async function read(body: string | Buffer, given: FeedFormat | null = null, size = 7, httpCharset?: string) {
  let format: FeedFormat | undefined
  const products: FeedProduct[] = []
  for await (const batch of parseFeed(chunks(body, size), given, (f) => (format = f), httpCharset))
    products.push(...batch)
  return { format, products }
}

/** Windows-1250 bytes of text holding only ASCII and these Czech letters. */
const CP1250: Record<string, number> = { Ž: 0x8e, ť: 0x9d, č: 0xe8, ý: 0xfd, ů: 0xf9, ň: 0xf2, Č: 0xc8 }
const cp1250 = (s: string) => Buffer.from([...s].map((c) => CP1250[c] ?? c.charCodeAt(0)))

const items = [
  { id: 'A-1', title: 'Hrnek „Žluťoučký“ & spol.', price: '1 299,90', category: 'Domácnost | Kuchyně' },
  { id: 'B-2', title: 'Talíř', price: '89.5', category: 'Domácnost > Jídelna' },
]

describe('feed parsing', () => {
  it('reads Heureka XML across any chunk boundary, nested elements not flattened into fields', async () => {
    const xml = heurekaFeed(items).replace(
      '<MANUFACTURER>',
      '<PARAM><PARAM_NAME>Barva</PARAM_NAME><VAL>žlutá</VAL></PARAM><MANUFACTURER>',
    )
    for (const size of [1, 7, 4096]) {
      const { format, products } = await read(xml, null, size)
      assert.equal(format, 'heureka')
      assert.deepEqual(products[0], {
        id: 'A-1',
        title: 'Hrnek „Žluťoučký“ & spol.',
        url: 'https://shop.example/p/A-1',
        image: 'https://shop.example/i/A-1.jpg',
        price: '1299.90',
        categories: ['Domácnost', 'Kuchyně'],
        extra: { MANUFACTURER: 'Acme' },
      })
      assert.deepEqual(products[1]!.categories, ['Domácnost', 'Jídelna'])
    }
  })

  it('reads Google Merchant RSS and Atom', async () => {
    const rss = await read(googleRss(items))
    assert.equal(rss.format, 'google')
    assert.deepEqual(
      rss.products.map((p) => [p.id, p.title, p.url, p.image, p.price, p.categories]),
      [
        [
          'A-1',
          items[0]!.title,
          'https://shop.example/p/A-1',
          'https://shop.example/i/A-1.jpg',
          '1299.90',
          ['Domácnost', 'Kuchyně'],
        ],
        [
          'B-2',
          'Talíř',
          'https://shop.example/p/B-2',
          'https://shop.example/i/B-2.jpg',
          '89.5',
          ['Domácnost', 'Jídelna'],
        ],
      ],
    )
    const atom = await read(googleAtom(items))
    assert.equal(atom.format, 'google')
    assert.deepEqual(
      atom.products.map((p) => [p.id, p.url, p.price]),
      [
        ['A-1', 'https://shop.example/p/A-1', '1299.90'],
        ['B-2', 'https://shop.example/p/B-2', '89.5'],
      ],
    )
  })

  it('reads CSV with `;` or `,`, a BOM and header aliases; rows without an id are skipped', async () => {
    for (const d of [';', ',']) {
      const { format, products } = await read(`\uFEFF${csvFeed(items, d)}${d}no id${d}${d}${d}${d}\n`)
      assert.equal(format, 'csv')
      assert.deepEqual(
        products.map((p) => [p.id, p.title, p.price, p.categories]),
        [
          ['A-1', items[0]!.title, '1299.90', ['Domácnost', 'Kuchyně']],
          ['B-2', 'Talíř', '89.5', ['Domácnost', 'Jídelna']],
        ],
      )
    }
    // A quote inside an unquoted field stays (an inch mark); a quoted field is still read as one.
    const inches = await read('id,title,price\np1,27" monitor,100\np2,"Desk, oak",5\n')
    assert.deepEqual(
      inches.products.map((p) => [p.id, p.title, p.price]),
      [
        ['p1', '27" monitor', '100'],
        ['p2', 'Desk, oak', '5'],
      ],
    )
    const aliased = await read(
      'item_id,Product Name,Link,image_link,PRICE_VAT,product_type,brand\n7,Seven,u,i,3,X,Acme\n',
    )
    assert.deepEqual(aliased.products, [
      {
        id: '7',
        title: 'Seven',
        url: 'u',
        image: 'i',
        price: '3',
        categories: ['X'],
        extra: { brand: 'Acme' },
      },
    ])
  })

  it('decodes the charset the XML declaration names', async () => {
    const xml = heurekaFeed([{ id: '1', title: 'Čaj' }]).replace('utf-8', 'windows-1250')
    const { products } = await read(cp1250(xml), null, 7, 'utf-8')
    assert.equal(products[0]!.title, 'Čaj')
  })

  it('reads a file that names no charset in the HTTP one, unless it reads as UTF-8; else UTF-8 or windows-1250', async () => {
    const title = 'Žluťoučký kůň'
    const csv = `id;title\nA;${title}\n`
    const xml = heurekaFeed([{ id: 'A', title }]).replace(/^<\?xml[^>]*>/, '')
    for (const [body, http] of [
      [cp1250(csv), 'windows-1250'],
      [cp1250(csv), undefined],
      [Buffer.from(csv), 'iso-8859-2'],
      [Buffer.from(csv), undefined],
      [cp1250(xml), 'windows-1250'],
      [Buffer.from(xml), 'windows-1250'],
    ] as const) {
      const { products } = await read(body, null, 7, http)
      assert.equal(products[0]!.title, title, `${http} ${body.subarray(0, 5).toString()}`)
    }
  })

  it('reads UTF-16 with a byte-order mark, and XML with white space before its declaration', async () => {
    const xml = heurekaFeed([{ id: 'A', title: 'Čaj' }])
    for (const body of [
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml.replace('utf-8', 'UTF-16'), 'utf16le')]),
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('id,title\r\nA,Čaj\r\n', 'utf16le')]),
      Buffer.from(`\r\n  ${xml}`),
      Buffer.from(`\uFEFF\n${xml}`),
    ]) {
      const { products } = await read(body)
      assert.deepEqual(
        [products[0]?.id, products[0]?.title],
        ['A', 'Čaj'],
        body.subarray(0, 8).toString('hex'),
      )
    }
  })

  it('inflates a gzipped feed whatever size its first chunks are', async () => {
    const xml = heurekaFeed(items)
    for (const size of [1, 2, 4096]) {
      let products = 0
      for await (const batch of parseFeed(
        gunzipIfCompressed(chunks(gzipSync(xml), size), 1e6),
        null,
        () => undefined,
      ))
        products += batch.length
      assert.equal(products, 2, `chunks of ${size}`)
    }
  })

  it('never cuts a long field inside a character (half an emoji is no text jsonb takes)', async () => {
    const long = `${'a'.repeat(MAX_FIELD_CHARS - 1)}😀 more`
    for (const body of [heurekaFeed([{ id: 'A', title: long }]), `id;title\nA;${long}\n`]) {
      const { products } = await read(body, null, 4096)
      assert.equal(products[0]!.title, 'a'.repeat(MAX_FIELD_CHARS - 1))
      assert.doesNotThrow(() => encodeURIComponent(products[0]!.title)) // throws on a lone surrogate
    }
  })

  it('refuses malformed and unknown files with a reason', async () => {
    const cases: [string, RegExp][] = [
      ['<SHOP><SHOPITEM><ITEM_ID>1</ITEM_ID></SHOP>', /not well-formed XML/],
      ['<SHOP><SHOPITEM><ITEM_ID>1</ITEM_ID></SHOPITEM>', /not well-formed XML/],
      ['<html><body/></html>', /neither a Heureka SHOP nor a Google Merchant/],
      ['name,price\nx,1\n', /no id column/],
      ['id,title\n1,"open quote\n', /CSV feed is malformed/],
      ['id,title\n1,"closed" then more\n', /CSV feed is malformed/],
      ['  \n ', /empty/],
    ]
    for (const [body, reason] of cases) {
      await assert.rejects(
        read(body),
        (err: Error) => err instanceof FeedParseError && reason.test(err.message),
      )
    }
  })

  it('reads prices and category paths as shops write them', () => {
    assert.equal(parsePrice('12.50 CZK'), '12.50')
    assert.equal(parsePrice('1 299,90 Kč'), '1299.90')
    assert.equal(parsePrice('1,299.90'), '1299.90')
    assert.equal(parsePrice('1.299,90'), '1299.90')
    assert.equal(parsePrice('1,299'), '1299')
    assert.equal(parsePrice('EUR 5'), '5')
    assert.equal(parsePrice('free'), null)
    assert.equal(parsePrice(''), null)
    assert.deepEqual(splitCategories(' A | B > C ||'), ['A', 'B', 'C'])
  })
})
