import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import libqp from 'libqp'
import { qpEncodeText } from './quoted-printable.js'

/** Texts that reach every branch: long runs, `=`, trailing blanks, each kind of line end, 2- to 4-byte UTF-8. */
const PIECES = [
  'a',
  ' ',
  '  ',
  '\t',
  '=',
  '.',
  '\r\n',
  '\n',
  '\r',
  'é',
  '€',
  '😀',
  'x'.repeat(80),
  ' \r\n',
  '\u0001',
]

/** A deterministic mix of the pieces (a small linear congruential generator: the same texts every run). */
function texts(count: number): string[] {
  let seed = 7
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
  return Array.from({ length: count }, () =>
    Array.from({ length: next() % 60 }, () => PIECES[next() % PIECES.length]).join(''),
  )
}

describe('qpEncodeText', () => {
  it('decodes to the text with CRLF line ends, in lines of at most 76 without trailing blanks', () => {
    for (const t of texts(400)) {
      const encoded = qpEncodeText(t)
      assert.equal(
        libqp.decode(encoded).toString('utf8'),
        t.replace(/\r\n|\r|\n/g, '\r\n'),
        JSON.stringify(t),
      )
      for (const line of encoded.split('\r\n')) {
        assert.ok(line.length <= 76, `line of ${line.length}: ${line}`)
        assert.doesNotMatch(line, /[ \t]$/)
        // No tab and no run of spaces either: the text is its own DKIM relaxed form (dkim-sign.ts relies on it).
        assert.doesNotMatch(line, /[^\x20-\x7e]|  /)
        // No line starts with a dot: SMTP needs no dot-stuffing for it (smtp-session.ts, dataOf).
        assert.doesNotMatch(line, /^\./)
      }
    }
  })

  it('leaves plain text readable and encodes only what it must', () => {
    assert.equal(qpEncodeText('a = b\nend '), 'a =3D b\r\nend=20')
    assert.equal(qpEncodeText('Žluť'), '=C5=BDlu=C5=A5')
    assert.equal(qpEncodeText('x'.repeat(80)), `${'x'.repeat(75)}=\r\n${'x'.repeat(5)}`)
    assert.equal(qpEncodeText('a  b   c\td'), 'a =20b =20=20c=09d')
    assert.equal(qpEncodeText('.\n.x. y.'), '=2E\r\n=2Ex. y.')
    assert.equal(qpEncodeText(`${'x'.repeat(75)}.y`), `${'x'.repeat(75)}=\r\n=2Ey`)
  })
})
