import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { describe, it } from 'node:test'
import { loadOnFirstUse } from './load-on-first-use.js'

describe('loadOnFirstUse', () => {
  it('loads the package at the first call, once, and not before', () => {
    const require = createRequire(import.meta.url)
    // A package nothing this file imports loads.
    const file = require.resolve('html-to-text')
    assert.equal(require.cache[file], undefined, 'not loaded before')
    const htmlToText = loadOnFirstUse<typeof import('html-to-text')>('html-to-text')
    assert.equal(require.cache[file], undefined, 'not loaded by asking for it')
    assert.equal(htmlToText().convert('<p>Hi</p>'), 'Hi')
    assert.notEqual(require.cache[file], undefined, 'loaded at the first call')
    assert.equal(htmlToText(), htmlToText(), 'the same module every time')
  })
})
