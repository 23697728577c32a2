import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { isValidEmail } from './email.js'

describe('isValidEmail', () => {
  it('takes the addresses mail providers deliver to', () => {
    for (const ok of [
      'a@b.cz',
      'jana.novakova@example.cz',
      'a.b.c+tag@x-y.example.org',
      "o'neil@example.com",
    ])
      assert.equal(isValidEmail(ok), true, ok)
  })

  it('refuses a local part that starts or ends with a dot or has two in a row (relays answer 501)', () => {
    for (const bad of [
      '.a@example.cz',
      'a.@example.cz',
      'a..b@example.cz',
      '.@example.cz',
      '.dot.@example.cz',
    ])
      assert.equal(isValidEmail(bad), false, bad)
  })

  it('refuses what it refused before: no @, spaces, a bad domain, over-long parts', () => {
    const long = `${'a'.repeat(65)}@example.cz`
    for (const bad of ['plain', 'a b@example.cz', 'a@-x.cz', 'a@x', '@x.cz', long, `a@${'b'.repeat(250)}.cz`])
      assert.equal(isValidEmail(bad), false, bad)
  })
})
