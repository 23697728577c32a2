import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { QpPart, qpPiece } from './qp-pieces.js'

/** Quoted-printable back to text: soft breaks dropped, `=XX` to their bytes, read as UTF-8. */
function decoded(qp: string): string {
  const bytes: number[] = []
  const s = qp.replace(/=\r\n/g, '')
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '=') {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16))
      i += 2
    } else bytes.push(s.charCodeAt(i))
  }
  return Buffer.from(bytes).toString('utf8')
}

/** What every part must be: lines of at most 76, none starting with a dot, and its own DKIM relaxed form. */
function assertWellFormed(qp: string) {
  for (const line of qp.split('\r\n')) {
    assert.ok(line.length <= 76, `line of ${line.length}: ${line}`)
    assert.ok(!line.startsWith('.'), line)
    assert.ok(!/ $|\t| {2}/.test(line), `blank at the end or a run: ${JSON.stringify(line)}`)
  }
  assert.ok(!/\r(?!\n)|(?<!\r)\n/.test(qp))
}

describe('quoted-printable pieces', () => {
  it('puts a merge value on the line it belongs to', () => {
    const part = new QpPart()
    part.add(qpPiece('Hello '))
    part.text('Reader1')
    part.add(qpPiece(' '))
    part.text('Bench')
    part.add(qpPiece('\n\nSpring collection, new arrivals and offers picked for you.\n'))
    assert.equal(
      part.encoded(),
      'Hello=20Reader1=20Bench\r\n\r\nSpring collection, new arrivals and offers picked for you.\r\n',
    )
  })

  it('starts a piece on a line of its own when its first line does not fit', () => {
    const part = new QpPart()
    part.add(qpPiece('x'.repeat(70)))
    part.text('a value of ten')
    const lines = part.encoded().split('\r\n')
    assert.deepEqual(lines, [`${'x'.repeat(70)}=`, 'a value of ten'])
  })

  it('any pieces in any order decode to their text and stay well formed', () => {
    const texts = [
      'Hello ',
      ' ',
      'Reader',
      '.dot first',
      'a line\n',
      '\n',
      'ends in a space ',
      '  two spaces  ',
      'tab\there',
      'Příliš žluťoučký kůň',
      'a=b&c=d',
      'https://track.example/t/c/NTE.ohuGU5NwEx0IFlSanNGDvA.0',
      'Spring collection, new arrivals and offers picked for you. '.repeat(3),
      'x'.repeat(74),
      'y'.repeat(75),
      'z'.repeat(76),
      '😀 emoji',
    ]
    // Seeded, so a failure can be replayed: 400 parts of up to 12 pieces.
    let seed = 7
    const next = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
      return seed % n
    }
    for (let round = 0; round < 400; round++) {
      const picked = Array.from({ length: 1 + next(12) }, () => texts[next(texts.length)]!)
      const part = new QpPart()
      for (const t of picked)
        if (next(2)) part.text(t)
        else part.add(qpPiece(t))
      const qp = part.encoded()
      assertWellFormed(qp)
      assert.equal(decoded(qp), picked.join('').replace(/\n/g, '\r\n'), JSON.stringify(picked))
    }
  })
})
