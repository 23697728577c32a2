import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { redirectTarget } from './redirect-target.js'

describe('redirectTarget', () => {
  it('takes absolute http(s) URLs only', () => {
    assert.equal(redirectTarget('https://shop.cz/thanks'), 'https://shop.cz/thanks')
    assert.equal(redirectTarget(' http://shop.cz '), 'http://shop.cz/')
    for (const page of ['', '  ', null, undefined, '/thanks', 'javascript:alert(1)', 'ftp://shop.cz/'])
      assert.equal(redirectTarget(page), null, String(page))
  })

  it('puts the address, URL-encoded, in place of *|EMAIL|* in any case and with encoded pipes', () => {
    assert.equal(
      redirectTarget('https://shop.cz/confirm?email=*|EMAIL|*&again=*%7Cemail%7C*', 'jo+x@example.cz'),
      'https://shop.cz/confirm?email=jo%2Bx%40example.cz&again=jo%2Bx%40example.cz',
    )
    // An address cannot break out of its parameter, nor turn the URL into another scheme.
    assert.equal(
      redirectTarget('https://shop.cz/?e=*|EMAIL|*', '"a&b=c#d"@example.cz'),
      'https://shop.cz/?e=%22a%26b%3Dc%23d%22%40example.cz',
    )
    assert.equal(redirectTarget('*|EMAIL|*', 'https://evil.example'), null)
    assert.equal(redirectTarget('https://shop.cz/?e=*|EMAIL|*'), 'https://shop.cz/?e=')
  })
})
