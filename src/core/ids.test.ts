import assert from 'node:assert/strict'
import { createHmac, randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { hmacSha256, signToken, tokenMac, verifyToken } from './ids.js'

test('hmacSha256 gives what createHmac gives: short, block-long, long and non-ASCII secrets and messages', () => {
  const secrets = ['', 'k', randomBytes(32).toString('base64url'), 'x'.repeat(64), 'y'.repeat(65), 'klíč']
  const messages = ['', 'click:MTIzLjQ', randomBytes(200).toString('base64url'), 'unsub:žluť']
  for (const secret of secrets)
    for (const message of messages)
      assert.deepEqual(
        hmacSha256(secret, message),
        createHmac('sha256', secret).update(message).digest(),
        `${secret.length}-character secret, message ${JSON.stringify(message.slice(0, 12))}`,
      )
})

test('a token verifies for its purpose only, and not once a character of it changes', () => {
  const secret = randomBytes(32).toString('base64url')
  const token = signToken(secret, 'click', '42.3')
  assert.equal(verifyToken(secret, 'click', token), '42.3')
  assert.equal(verifyToken(secret, 'unsub', token), null)
  assert.equal(verifyToken('another secret', 'click', token), null)
  const last = token.at(-1) === 'A' ? 'B' : 'A'
  assert.equal(verifyToken(secret, 'click', `${token.slice(0, -1)}${last}`), null)
})

test('tokens signed again come from the cache as signed: each for its own secret and purpose', () => {
  const secrets = [randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url')]
  const first = secrets.flatMap((s) => ['click', 'open'].map((p) => signToken(s, p, '7.1')))
  assert.equal(new Set(first).size, 4, 'another secret or purpose gives another token')
  // Enough other payloads to clear the cache of one purpose in between, then the same four again.
  for (let i = 0; i < 200; i++) signToken(secrets[0]!, 'click', `${i}.0`)
  const again = secrets.flatMap((s) => ['click', 'open'].map((p) => signToken(s, p, '7.1')))
  assert.deepEqual(again, first)
  secrets.forEach((s, i) => {
    assert.equal(verifyToken(s, 'click', first[i * 2]!), '7.1')
    assert.equal(verifyToken(s, 'open', first[i * 2 + 1]!), '7.1')
    assert.equal(verifyToken(s, 'open', first[i * 2]!), null)
  })
})

test("tokenMac is the MAC part of signToken's token for the same payload, non-ASCII too", () => {
  const secret = randomBytes(32).toString('base64url')
  for (const payload of ['42\neva@example.com\nHello', '7\nadam@example.com\nŽluťoučký kůň'])
    assert.equal(
      tokenMac(secret, 'message-id', payload),
      signToken(secret, 'message-id', payload).split('.')[1],
    )
})
