import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
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
})
