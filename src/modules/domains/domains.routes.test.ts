import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { createPublicKey, createSign, createVerify } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { startDnsServer } from '../../../test/helpers/dns-server.js'
import { domains } from './domains.table.js'

const SELECTOR = /^td\d{6}[0-9a-f]{4}$/
const MAIL_HOST = 'mail.tidings.test'
const TAKEN = { errors: { name: ['The name has already been taken.'] } }
const INVALID_NAME = { errors: { name: ['The name must be a valid domain name.'] } }
const INVALID_TYPE = { errors: { type: ['The selected type is invalid.'] } }
const NOT_FOUND = { message: 'Domain not found' }

interface DnsEntry {
  type: string
  host: string
  value: string
  priority?: number
  valid?: boolean
}

describe('domains', async () => {
  // No lookup in this file may leave the machine: the resolver points at a local server with an empty zone.
  const dns = await startDnsServer()
  const t = await startTestApp({ config: { dnsServers: [dns.address], publicUrl: `https://${MAIL_HOST}` } })
  const other = await t.createAccount()

  const keyRows = (name: string) =>
    t.ctx.db
      .select({
        accountId: domains.accountId,
        type: domains.type,
        selector: domains.dkimSelector,
        privateKey: domains.dkimPrivateKey,
        publicKey: domains.dkimPublicKey,
      })
      .from(domains)
      .where(eq(domains.name, name))

  it('creates a sending domain with the records to publish and a working RSA-2048 key pair', async () => {
    const res = await t.req('POST', '/domains', { body: { name: 'shop.example', type: 'sending' } })
    assert.equal(res.status, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    const [row] = await keyRows('shop.example')
    assert.ok(row)
    assert.match(row.selector, SELECTOR)
    const [{ id } = { id: 0 }] = await t.ctx.db
      .select({ id: domains.id })
      .from(domains)
      .where(eq(domains.name, 'shop.example'))
    assert.deepEqual(res.body, {
      id,
      name: 'shop.example',
      type: 'sending',
      valid: false,
      blocked: false,
      dns: [
        {
          type: 'TXT',
          host: `${row.selector}._domainkey.shop.example`,
          value: `v=DKIM1; k=rsa; p=${row.publicKey}`,
        },
        { type: 'TXT', host: 'shop.example', value: 'v=spf1 a mx ~all' },
        { type: 'TXT', host: '_dmarc.shop.example', value: 'v=DMARC1; p=none' },
        { type: 'MX', host: 'bounces.shop.example', value: MAIL_HOST, priority: 10 },
      ],
    })

    const publicKey = createPublicKey({
      key: Buffer.from(row.publicKey, 'base64'),
      format: 'der',
      type: 'spki',
    })
    assert.equal(publicKey.asymmetricKeyType, 'rsa')
    assert.equal(publicKey.asymmetricKeyDetails?.modulusLength, 2048)
    assert.match(row.privateKey, /^-----BEGIN PRIVATE KEY-----\n/)
    const signature = createSign('sha256').update('mail').sign(row.privateKey)
    assert.equal(createVerify('sha256').update('mail').verify(publicKey, signature), true)

    const privateBody = row.privateKey.split('\n')[1]!
    assert.equal(res.text.includes(privateBody), false, 'the private key never leaves the service')
    assert.equal((await t.req('GET', '/domains')).text.includes(privateBody), false)
  })

  it('defaults to sending and stores the name lower-cased without the trailing dot', async () => {
    const res = await t.req('POST', '/domains', { body: { name: ' News.Example.COM. ' } })
    assert.equal(res.status, 200)
    assert.equal(res.body.name, 'news.example.com')
    assert.equal(res.body.type, 'sending')
    assert.equal(res.body.dns[1].host, 'news.example.com')
  })

  it('stores an international name in its ASCII form', async () => {
    const res = await t.req('POST', '/domains', { body: { name: 'Příklad.cz', type: 'transactional' } })
    assert.equal(res.status, 200)
    assert.equal(res.body.name, 'xn--pklad-zsa96e.cz')
  })

  it('refuses a type other than sending or transactional', async () => {
    for (const type of ['marketing', '', 1, null]) {
      const res = await t.req('POST', '/domains', { body: { name: 'type.example', type } })
      assert.equal(res.status, 422, `type ${JSON.stringify(type)}`)
      assert.deepEqual(res.body, INVALID_TYPE)
    }
    assert.deepEqual((await t.req('GET', '/domains')).body.filter(byName('type.example')), [])
  })

  it('refuses a name that is not a domain name', async () => {
    for (const name of [
      'localhost',
      'no spaces.example',
      '-dash.example',
      'dash-.example',
      'under_score.example',
      'a..example',
      '192.168.1.1',
      'user@shop.example',
      'https://shop.example',
      `${'a'.repeat(64)}.example`,
      `${'abcdefghi.'.repeat(23)}example`,
    ]) {
      const res = await t.req('POST', '/domains', { body: { name } })
      assert.equal(res.status, 422, name)
      assert.deepEqual(res.body, INVALID_NAME, name)
    }
    for (const body of [{}, { name: '' }, { name: ' . ' }]) {
      const res = await t.req('POST', '/domains', { body })
      assert.equal(res.status, 422)
      assert.deepEqual(res.body, { errors: { name: ['The name field is required.'] } })
    }
  })

  it('refuses the same name and type twice, in any spelling', async () => {
    assert.equal((await t.req('POST', '/domains', { body: { name: 'twice.example' } })).status, 200)
    for (const name of ['twice.example', 'TWICE.example.']) {
      const res = await t.req('POST', '/domains', { body: { name, type: 'sending' } })
      assert.equal(res.status, 422)
      assert.deepEqual(res.body, TAKEN)
    }
  })

  it('gives the second variant of a name the same selector, key pair and records', async () => {
    const sending = await t.req('POST', '/domains', { body: { name: 'both.example', type: 'sending' } })
    const transactional = await t.req('POST', '/domains', {
      body: { name: 'both.example', type: 'transactional' },
    })
    assert.equal(transactional.status, 200)
    assert.equal(transactional.body.type, 'transactional')
    assert.deepEqual(transactional.body.dns, sending.body.dns)
    const rows = await keyRows('both.example')
    assert.equal(rows.length, 2)
    assert.equal(rows[0]!.selector, rows[1]!.selector)
    assert.equal(rows[0]!.privateKey, rows[1]!.privateKey)
    assert.equal(rows[0]!.publicKey, rows[1]!.publicKey)
  })

  it('creates both variants at once with one key pair', async () => {
    const [a, b] = await Promise.all(
      (['sending', 'transactional'] as const).map((type) =>
        t.req('POST', '/domains', { body: { name: 'race.example', type } }),
      ),
    )
    assert.equal(a!.status, 200)
    assert.equal(b!.status, 200)
    assert.deepEqual(a!.body.dns, b!.body.dns)
  })

  it('lists the domains of the account, each with its records', async () => {
    const res = await t.req('GET', '/domains')
    assert.equal(res.status, 200)
    const both = res.body.filter(byName('both.example'))
    assert.deepEqual(
      both.map((d: { type: string }) => d.type),
      ['sending', 'transactional'],
    )
    for (const d of res.body) {
      assert.deepEqual(Object.keys(d), ['id', 'name', 'type', 'valid', 'blocked', 'dns'])
      assert.deepEqual(
        d.dns.map((r: DnsEntry) => r.type),
        ['TXT', 'TXT', 'TXT', 'MX'],
      )
    }
  })

  describe('DELETE /domains/{domain}', () => {
    it('deletes the only variant whichever type it is when type is omitted', async () => {
      await t.req('POST', '/domains', { body: { name: 'only-tx.example', type: 'transactional' } })
      const res = await t.req('DELETE', '/domains/only-tx.example')
      assert.equal(res.status, 200)
      assert.deepEqual(res.body, { name: 'only-tx.example', valid: false, blocked: false })
      assert.deepEqual((await t.req('GET', '/domains')).body.filter(byName('only-tx.example')), [])
    })

    it('answers 409 and deletes nothing when both variants are held and type is omitted', async () => {
      await t.req('POST', '/domains', { body: { name: 'pair.example', type: 'sending' } })
      await t.req('POST', '/domains', { body: { name: 'pair.example', type: 'transactional' } })
      const res = await t.req('DELETE', '/domains/pair.example')
      assert.equal(res.status, 409)
      assert.equal(res.headers['content-type'], 'application/json')
      assert.deepEqual(res.body, {
        error: 'The domain is held as both a sending and a transactional domain; choose one with type.',
        domain: 'pair.example',
      })
      assert.equal((await t.req('GET', '/domains')).body.filter(byName('pair.example')).length, 2)
      // An empty type is no type.
      assert.equal((await t.req('DELETE', '/domains/pair.example?type=')).status, 409)
    })

    it('deletes the variant named by type and leaves the other', async () => {
      const res = await t.req('DELETE', '/domains/PAIR.example.?type=transactional')
      assert.equal(res.status, 200)
      assert.deepEqual(res.body, { name: 'pair.example', valid: false, blocked: false })
      const left = (await t.req('GET', '/domains')).body.filter(byName('pair.example'))
      assert.deepEqual(
        left.map((d: { type: string }) => d.type),
        ['sending'],
      )
      assert.equal((await t.req('DELETE', '/domains/pair.example?type=transactional')).status, 404)
      assert.equal((await t.req('DELETE', '/domains/pair.example')).status, 200)
    })

    it('refuses an invalid type with a field error and deletes nothing', async () => {
      await t.req('POST', '/domains', { body: { name: 'keep.example' } })
      for (const type of ['marketing', 'SENDING']) {
        const res = await t.req('DELETE', `/domains/keep.example?type=${type}`)
        assert.equal(res.status, 422)
        assert.deepEqual(res.body, INVALID_TYPE)
      }
      assert.equal((await t.req('GET', '/domains')).body.filter(byName('keep.example')).length, 1)
    })

    it('deletes one variant by its numeric id (ecomail-php), as GET /domains shows it', async () => {
      await t.req('POST', '/domains', { body: { name: 'by-id.example', type: 'sending' } })
      await t.req('POST', '/domains', { body: { name: 'by-id.example', type: 'transactional' } })
      const held = (await t.req('GET', '/domains')).body.filter(byName('by-id.example'))
      const tx = held.find((d: { type: string }) => d.type === 'transactional')
      const sending = held.find((d: { type: string }) => d.type === 'sending')
      assert.equal(typeof tx.id, 'number')
      // Both variants held, yet an id names one of them: no 409.
      const res = await t.req('DELETE', `/domains/${tx.id}`)
      assert.equal(res.status, 200)
      assert.deepEqual(res.body, { name: 'by-id.example', valid: false, blocked: false })
      const left = (await t.req('GET', '/domains')).body.filter(byName('by-id.example'))
      assert.deepEqual(
        left.map((d: { id: number }) => d.id),
        [sending.id],
      )
      assert.deepEqual((await t.req('DELETE', `/domains/${tx.id}`)).body, NOT_FOUND)
      // A type the variant is not: 404, and it stays.
      assert.equal((await t.req('DELETE', `/domains/${sending.id}?type=transactional`)).status, 404)
      assert.equal((await t.req('DELETE', `/domains/${sending.id}?type=sending`)).status, 200)
      assert.deepEqual((await t.req('GET', '/domains')).body.filter(byName('by-id.example')), [])
    })

    it('answers 404 for an id the account does not hold', async () => {
      for (const url of ['/domains/0', '/domains/999999', '/domains/99999999999999', '/domains/2147483648']) {
        const res = await t.req('DELETE', url)
        assert.equal(res.status, 404, url)
        assert.deepEqual(res.body, NOT_FOUND)
      }
    })

    it('answers 404 for a name the account does not hold', async () => {
      for (const url of [
        '/domains/missing.example',
        '/domains/not a domain',
        '/domains/missing.example?type=sending',
      ]) {
        const res = await t.req('DELETE', url)
        assert.equal(res.status, 404, url)
        assert.deepEqual(res.body, NOT_FOUND)
      }
    })
  })

  it('verify: refuses an invalid type, and answers 404 for a name not held', async () => {
    assert.deepEqual((await t.req('POST', '/domains/shop.example/verify?type=x')).body, INVALID_TYPE)
    assert.equal((await t.req('POST', '/domains/shop.example/verify?type=x')).status, 422)
    for (const url of [
      '/domains/missing.example/verify',
      '/domains/shop.example/verify?type=transactional',
    ]) {
      const res = await t.req('POST', url)
      assert.equal(res.status, 404, url)
      assert.deepEqual(res.body, NOT_FOUND)
    }
  })

  it("answers another account's domain exactly as a missing one", async () => {
    await t.req('POST', '/domains', { body: { name: 'mine.example' } })
    assert.deepEqual((await t.req('GET', '/domains', { key: other.key })).body, [])
    for (const [method, url] of [
      ['POST', '/domains/mine.example/verify'],
      ['DELETE', '/domains/mine.example'],
      ['DELETE', '/domains/mine.example?type=sending'],
    ] as const) {
      const theirs = await t.req(method, url, { key: other.key })
      assert.equal(theirs.status, 404, `${method} ${url}`)
      assert.deepEqual(theirs.body, NOT_FOUND)
    }
    assert.equal((await t.req('GET', '/domains')).body.filter(byName('mine.example')).length, 1)
    const [mine] = (await t.req('GET', '/domains')).body.filter(byName('mine.example'))
    const byId = await t.req('DELETE', `/domains/${mine.id}`, { key: other.key })
    assert.equal(byId.status, 404)
    assert.deepEqual(byId.body, NOT_FOUND)
    assert.equal((await t.req('GET', '/domains')).body.filter(byName('mine.example')).length, 1)

    // The other account may hold the same name, with its own keys.
    const theirs = await t.req('POST', '/domains', { key: other.key, body: { name: 'mine.example' } })
    assert.equal(theirs.status, 200)
    const rows = await keyRows('mine.example')
    assert.equal(rows.length, 2)
    assert.notEqual(rows[0]!.publicKey, rows[1]!.publicKey)
  })

  it('needs a key on every route', async () => {
    for (const [method, url] of [
      ['GET', '/domains'],
      ['POST', '/domains'],
      ['POST', '/domains/shop.example/verify'],
      ['DELETE', '/domains/shop.example'],
    ] as const) {
      const res = await t.req(method, url, { key: null, body: { name: 'x.example' } })
      assert.equal(res.status, 401, `${method} ${url}`)
      assert.deepEqual(res.body, { message: 'Unauthorized' })
    }
    assert.equal((await t.req('GET', '/domains', { key: 'wrong' })).status, 401)
  })

  it('sent DNS queries only to the local test server, and none for requests that failed before looking', () => {
    // Nothing above verified a held name, so the resolver was never used.
    assert.deepEqual(dns.queries, [])
  })
})

function byName(name: string) {
  return (d: { name: string }) => d.name === name
}
