import { it } from 'node:test'
import assert from 'node:assert/strict'
import { isValidEmail } from './email.js'

it('isValidEmail takes what mail providers deliver to and refuses what relays refuse', () => {
  const cases: [address: string, valid: boolean][] = [
    ['a@b.cz', true],
    ['jana.novakova@example.cz', true],
    ['a.b.c+tag@x-y.example.org', true],
    ["o'neil@example.com", true],
    // A dot at either end of the local part, or two in a row: relays answer 501 (RFC 5321 Dot-string).
    ['.a@example.cz', false],
    ['a.@example.cz', false],
    ['a..b@example.cz', false],
    ['.@example.cz', false],
    // Refused before as well: no @, a space, a bad domain, over-long parts.
    ['plain', false],
    ['a b@example.cz', false],
    ['a@-x.cz', false],
    ['a@x', false],
    ['@x.cz', false],
    [`${'a'.repeat(65)}@example.cz`, false],
    [`a@${'b'.repeat(250)}.cz`, false],
  ]
  for (const [address, valid] of cases) assert.equal(isValidEmail(address), valid, address)
})
