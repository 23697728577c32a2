import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { simpleParser } from 'mailparser'
import { headerLine, mimeHeaderLine, plainHeaderLine } from './header-line.js'

/** A small seeded generator (mulberry32): the same cases on every run. */
function random(seed: number) {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const next = random(11)
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!
const joined = (pieces: readonly string[], max: number) =>
  Array.from({ length: Math.floor(next() * (max + 1)) }, () => pick(pieces)).join('')

// Every rule of the fast path has pieces on both sides of it: quotes, `=?`, non-ASCII, controls, line ends,
// address specials, lengths around the fold at 76.
const TEXT = [
  'a',
  'Z',
  '0',
  ' ',
  '  ',
  '"',
  '=?',
  '?=',
  'é',
  'ř',
  '\t',
  '\r\n',
  '\n',
  '<',
  '>',
  '@',
  ',',
  ';',
  ':',
]
const MORE = ['(', ')', '[', ']', '\\', '.', "'", '_', '-', '\x01', '\x7f', 'x'.repeat(40), 'word ', 'Novák']
const LOCAL = ['a', 'B', '9', '.', '..', '+', '-', '_', '"', 'é', ' ', '(', '!', '~', '=', '?', 'reader123']
const HOSTS = ['example.com', 'EXAMPLE.com', 'xn--jgeva-dua.ee', 'jõgeva.ee', '-bad.com', 'a..b', 'localhost']
const MORE_HOSTS = ['[127.0.0.1]', 'sub.domain-x.cz', `${'x'.repeat(60)}.com`, 'a@b.cz', '', 'exa mple.com']
const KEYS = [
  'Subject',
  'List-Unsubscribe',
  'X-Campaign',
  'To',
  'Message-ID',
  'From',
  'subject',
  'to',
  'X Bad',
]

function value(key: string): unknown {
  if (key.toLowerCase() === 'to' || key === 'From') {
    const local =
      next() < 0.7 ? joined(['a', 'B', '9', '.', '+', '-', '_', 'reader123'], 4) : joined(LOCAL, 5)
    const name = next() < 0.6 ? joined(['Reader', ' ', '12', '_', 'Ann'], 4) : joined([...TEXT, ...MORE], 4)
    const entry = { name, address: `${local}@${pick([...HOSTS, ...MORE_HOSTS])}` }
    return next() < 0.9 ? [entry] : [entry, entry]
  }
  if (key === 'Message-ID')
    return next() < 0.6 ? `<${joined(['a', '1', '.', '-', '@', 'x'], 10)}>` : joined(TEXT, 6)
  return joined([...TEXT, ...MORE], next() < 0.5 ? 6 : 14)
}

describe('header lines without MimeNode', () => {
  it('are the lines MimeNode writes, for every generated value the fast path takes', () => {
    let fast = 0
    let slow = 0
    for (let i = 0; i < 20_000; i++) {
      const key = pick(KEYS)
      const v = value(key)
      // MimeNode rewrites the address objects it is given: each side gets its own copy.
      const expected = mimeHeaderLine(key, structuredClone(v))
      const line = plainHeaderLine(key, structuredClone(v))
      if (line === undefined) slow++
      else {
        fast++
        assert.equal(line, expected, `${key}: ${JSON.stringify(v)}`)
      }
      assert.equal(headerLine(key, structuredClone(v)), expected, `${key}: ${JSON.stringify(v)}`)
    }
    // Both sides of the rules were reached (a generator that only made plain values would prove little).
    assert.ok(fast > 3000 && slow > 3000, `fast ${fast}, slow ${slow}`)
  })

  it("take the fast path for a campaign message's own lines", () => {
    const lines: [string, unknown, string][] = [
      [
        'To',
        [{ name: 'Reader 12', address: 'reader12@Shop.example' }],
        'To: Reader 12 <reader12@shop.example>',
      ],
      ['To', [{ name: '', address: 'a.b+c@shop.example' }], 'To: a.b+c@shop.example'],
      ['Subject', 'New for you, Reader12', 'Subject: New for you, Reader12'],
      ['Message-ID', '<1-2@shop.example>', 'Message-ID: <1-2@shop.example>'],
      [
        'List-Unsubscribe',
        `<https://mail.shop.example/u/${'x'.repeat(60)}>`,
        `List-Unsubscribe:\r\n <https://mail.shop.example/u/${'x'.repeat(60)}>`,
      ],
    ]
    for (const [key, v, expected] of lines) {
      assert.equal(plainHeaderLine(key, v), expected)
      assert.equal(mimeHeaderLine(key, structuredClone(v)), expected)
    }
  })

  it('never pass 998 characters a line (RFC 5322 §2.1.1), even where a value has no space to fold at', async () => {
    for (const subject of [
      'x'.repeat(998),
      `Hi ${'y'.repeat(2000)} there`,
      `${'é'.repeat(400)}${'z'.repeat(995)}`,
    ]) {
      const line = headerLine('Subject', subject)
      for (const l of line.split('\r\n')) assert.ok(l.length <= 998, `a line of ${l.length}`)
      assert.equal((await simpleParser(`${line}\r\n\r\nbody\r\n`)).subject, subject)
    }
    // Values that fold as they are keep MimeNode's line.
    const spaced = 'word '.repeat(300).trim()
    assert.equal(headerLine('Subject', spaced), mimeHeaderLine('Subject', spaced))
  })

  it('write a display name too long for a line as encoded words, which a reader decodes to the name', async () => {
    const long = 'x'.repeat(1000)
    const to = [
      { name: long, address: 'jana@example.cz' },
      { name: `Petr ${'q'.repeat(990)}`, address: 'petr@jõgeva.ee' },
      { name: '', address: 'bare@example.cz' },
    ]
    const line = headerLine('To', to)
    for (const l of line.split('\r\n')) assert.ok(l.length <= 998, `a line of ${l.length}`)
    assert.ok(line.includes('<petr@xn--jgeva-dua.ee>'), 'the host in punycode, as MimeNode writes it')
    const parsed = (await simpleParser(`${line}\r\n\r\nbody\r\n`)).to as { value: unknown[] }
    assert.deepEqual(parsed.value, [
      { name: long, address: 'jana@example.cz' },
      { name: to[1]!.name, address: 'petr@jõgeva.ee' },
      { name: '', address: 'bare@example.cz' },
    ])
    // A name that fits keeps MimeNode's line.
    const short = [{ name: 'Jana', address: 'jana@example.cz' }]
    assert.equal(headerLine('From', short), mimeHeaderLine('From', short))
  })

  it('leave to MimeNode what it must encode', () => {
    for (const [key, v] of [
      ['Subject', 'Say "hi"'],
      ['Subject', 'Příliš'],
      ['Subject', 'a =?utf-8?q?x?= b'],
      ['To', [{ name: 'Novák, Jan', address: 'jan@shop.example' }]],
      ['To', [{ name: 'Jan', address: 'jan@jõgeva.ee' }]],
      ['To', [{ name: 'Jan', address: '"jan doe"@shop.example' }]],
      ['From', [{ name: 'Shop', address: 'news@shop.example' }]],
    ] as [string, unknown][])
      assert.equal(plainHeaderLine(key, v), undefined, `${key}: ${JSON.stringify(v)}`)
  })
})
