import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { qpEncodeText } from './quoted-printable.js'
import { htmlToTextPart } from './text-part.js'

describe('text part', () => {
  it('drops head, style, script, keeps link targets and decodes entities', () => {
    const html =
      '<html><head><title>T</title><style>p{color:red}</style></head><body><h1>Hello&nbsp;there</h1>' +
      '<p>Line<br>next &amp; &#x161;&#269;</p><script>alert(1)</script>' +
      '<p><a href="https://x.cz/a?b=1&amp;c=2">Go</a> <a href="https://x.cz">https://x.cz</a></p></body></html>'
    const text = htmlToTextPart(html)
    assert.match(text, /Hello\sthere/)
    assert.match(text, /Line\nnext & šč/)
    assert.match(text, /Go \(https:\/\/x\.cz\/a\?b=1&c=2\)/)
    assert.doesNotMatch(text, /color:red|alert|<|T\n/)
  })

  it('wraps plain prose so that quoted-printable needs no soft break in it', () => {
    const prose = 'Spring collection, new arrivals and offers picked for you. '.repeat(40)
    const text = htmlToTextPart(`<p>${prose}</p><p>${prose}</p>`)
    const lines = text.split('\n')
    assert.ok(lines.length > 30)
    assert.ok(lines.every((l) => l.length <= 75))
    // Wrapped, not cut: every line but a paragraph's last is filled to within a word of the limit.
    assert.ok(lines.filter((l) => l.length > 65).length > 25)
    const encoded = qpEncodeText(text).split('\r\n')
    assert.deepEqual(
      encoded.filter((l) => l.endsWith('=')),
      [],
    )
  })
})
