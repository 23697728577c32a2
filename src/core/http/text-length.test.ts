import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { longerThan } from './text-length.js'

describe('longerThan counts code points', () => {
  it('at, below and past the limit, in one-unit and two-unit characters and a mix', () => {
    assert.equal(longerThan('abc', 3), false)
    assert.equal(longerThan('abcd', 3), true)
    assert.equal(longerThan('😀😀😀', 3), false)
    assert.equal(longerThan('😀😀😀😀', 3), true)
    assert.equal(longerThan('a😀b', 3), false)
    assert.equal(longerThan('a😀bc', 3), true)
    assert.equal(longerThan('', 0), false)
    assert.equal(longerThan('x', 0), true)
  })
})
