import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { nodeTooOld } from './node-version.js'

describe('the Node.js version check of the entry points', () => {
  it('refuses versions before 20.11 and takes 20.11 and later', () => {
    for (const old of ['18.19.1', '20.0.0', '20.10.9']) assert.equal(nodeTooOld(old), true, old)
    for (const fine of ['20.11.0', '20.11.1', '20.19.2', '22.0.0', '24.3.0'])
      assert.equal(nodeTooOld(fine), false, fine)
  })
})
