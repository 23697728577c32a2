import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { signToken } from '../ids.js'
import { createSmtpMailer } from './smtp.js'
import { buildRawMessage } from './raw-message.js'
import { startSmtpSink } from '../../../test/helpers/smtp-sink.js'
import { parseVerpAddress, verpAddress } from './verp.js'

const SECRET = 'verp-test-secret'
/** RFC 5321 dot-string: atoms of atext separated by single dots; what an MTA passes without quoting. */
const DOT_STRING = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/

function split(address: string): { local: string; domain: string } {
  const at = address.lastIndexOf('@')
  return { local: address.slice(0, at), domain: address.slice(at + 1) }
}

describe('VERP addresses', () => {
  it('round-trips a message reference', () => {
    const address = verpAddress(SECRET, 'm123', 'bounce.tidings.test')
    assert.match(address, /^bounces\+[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+@bounce\.tidings\.test$/)
    assert.equal(parseVerpAddress(SECRET, address), 'm123')
  })

  it('mints unquoted RFC 5321 local parts within 64 octets', () => {
    for (const ref of ['m1', 'm123', 'm9007199254740991', 'c42:s1337']) {
      const { local } = split(verpAddress(SECRET, ref, 'bounce.tidings.test'))
      assert.match(local, DOT_STRING, local)
      assert.ok(local.length <= 64, `${local} is ${local.length} octets`)
      assert.equal(parseVerpAddress(SECRET, verpAddress(SECRET, ref, 'b.test')), ref)
    }
  })

  it('refuses references that would not fit an SMTP local part, and empty ones', () => {
    assert.throws(() => verpAddress(SECRET, 'm'.repeat(40), 'bounce.tidings.test'), RangeError)
    assert.throws(() => verpAddress(SECRET, '', 'bounce.tidings.test'), RangeError)
  })

  it('accepts the forms addresses arrive in: <...>, any domain case, upper-case prefix, quoted', () => {
    const address = verpAddress(SECRET, 'm7', 'bounce.tidings.test')
    const { local, domain } = split(address)
    assert.equal(parseVerpAddress(SECRET, `<${address}>`), 'm7')
    assert.equal(parseVerpAddress(SECRET, `  ${address}\r\n`), 'm7')
    assert.equal(parseVerpAddress(SECRET, `${local}@${domain.toUpperCase()}`), 'm7')
    assert.equal(parseVerpAddress(SECRET, `${local}@Other-Bounce.Example`), 'm7')
    assert.equal(parseVerpAddress(SECRET, `BOUNCES+${local.slice('bounces+'.length)}@${domain}`), 'm7')
    assert.equal(parseVerpAddress(SECRET, `"${local}"@${domain}`), 'm7')
    assert.equal(verpAddress(SECRET, 'm7', 'Bounce.Tidings.TEST'), address)
  })

  it('rejects tampering: another secret, edited body or MAC, spliced halves, other purposes', () => {
    const address = verpAddress(SECRET, 'm123', 'bounce.tidings.test')
    const token = split(address).local.slice('bounces+'.length)
    const [body = '', mac = ''] = token.split('.')
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1)
    const other = split(verpAddress(SECRET, 'm124', 'x.test')).local.slice('bounces+'.length)
    const at = (t: string) => `bounces+${t}@bounce.tidings.test`

    assert.equal(parseVerpAddress('another-secret', address), null)
    assert.equal(parseVerpAddress(SECRET, at(`${flip(body, 0)}.${mac}`)), null)
    assert.equal(parseVerpAddress(SECRET, at(`${body}.${flip(mac, 5)}`)), null)
    assert.equal(parseVerpAddress(SECRET, at(`${body}.${mac.slice(0, -1)}`)), null)
    assert.equal(parseVerpAddress(SECRET, at(`${other.split('.')[0]}.${mac}`)), null)
    assert.equal(parseVerpAddress(SECRET, at(signToken(SECRET, 'unsubscribe', 'm123'))), null)
    assert.equal(parseVerpAddress(SECRET, at(signToken(SECRET, 'verp', 'm123'))), 'm123')
  })

  it('rejects a MAC edited only in the bits base64url ignores in its last character', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const address = verpAddress(SECRET, 'm123', 'bounce.tidings.test')
    const { local, domain } = split(address)
    const last = alphabet.indexOf(local.slice(-1))
    // 16 MAC bytes end in a character carrying 2 bits; the low 4 are padding a decoder drops.
    const twin = alphabet[last ^ 1] ?? ''
    assert.equal(parseVerpAddress(SECRET, `${local.slice(0, -1)}${twin}@${domain}`), null)
  })

  it('is case-sensitive in the token, as base64url must be', () => {
    const address = verpAddress(SECRET, 'm123', 'bounce.tidings.test')
    assert.equal(parseVerpAddress(SECRET, address.toLowerCase()), null)
  })

  it('rejects other prefixes and garbage', () => {
    const token = split(verpAddress(SECRET, 'm1', 'b.test')).local.slice('bounces+'.length)
    for (const bad of [
      `bounce+${token}@b.test`,
      `news+${token}@b.test`,
      `${token}@b.test`,
      `xbounces+${token}@b.test`,
      `bounces-${token}@b.test`,
      `bounces+${token}`,
      `bounces+${token}@`,
      `bounces+${token}.x@b.test`,
      `bounces+${token.replace('.', '')}@b.test`,
      `bounces+${token.replace('-', '+').replace('_', '/')}==@b.test`,
      'bounces+@b.test',
      'bounces+.@b.test',
      '',
      '@',
      '<>',
      'MAILER-DAEMON',
      'jan.novak@example.org',
    ]) {
      assert.equal(parseVerpAddress(SECRET, bad), null, bad)
    }
  })

  it('survives a real SMTP transaction as the envelope sender, unchanged', async () => {
    const sink = await startSmtpSink()
    const mailer = createSmtpMailer({ url: sink.url })
    try {
      const returnPath = verpAddress(SECRET, 'm9007199254740991', 'bounce.tidings.test')
      const { raw, messageId } = buildRawMessage(
        {
          from: { address: 'news@shop.example.com' },
          to: [{ address: 'jan@example.org' }],
          subject: 'VERP',
          text: 'hello',
        },
        'tidings.test',
      )
      await mailer.sendRaw({ from: returnPath, to: ['jan@example.org'] }, Buffer.from(raw), messageId)
      const [message] = await sink.waitFor(1)
      assert.equal(message?.envelopeFrom, returnPath)
      assert.equal(parseVerpAddress(SECRET, message?.envelopeFrom ?? ''), 'm9007199254740991')
    } finally {
      await mailer.close()
    }
  })
})
