import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { limitHeapGrowth } from './heap-growth.js'

describe('limitHeapGrowth', () => {
  it('leaves a growth the node command line sets alone', () => {
    assert.equal(limitHeapGrowth(['--heap-growing-percent=80']), false)
  })
  it('sets it otherwise', () => {
    assert.equal(limitHeapGrowth(['--enable-source-maps']), true)
  })
})
