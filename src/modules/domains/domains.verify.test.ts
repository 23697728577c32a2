import { beforeEach, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { startDnsServer, type Zone } from '../../../test/helpers/dns-server.js'
import { DNS_TRIES } from './dns-lookup.js'
import { domains } from './domains.table.js'

const NAME = 'verify.example'
const MAIL_HOST = 'mail.tidings.test'

interface DnsEntry {
  type: string
  host: string
  value: string
  valid?: boolean
}

/** `dns[].valid` in the published order: DKIM, SPF, DMARC, bounce MX. */
const validity = (body: { dns: DnsEntry[] }) => body.dns.map((r) => r.valid)

function otherPublicKey(): string {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return publicKey.export({ type: 'spki', format: 'der' }).toString('base64')
}

describe('domain verification over DNS', async () => {
  const dns = await startDnsServer()
  const t = await startTestApp({ config: { dnsServers: [dns.address], publicUrl: `https://${MAIL_HOST}` } })

  const created = await t.req('POST', '/domains', { body: { name: NAME, type: 'sending' } })
  await t.req('POST', '/domains', { body: { name: NAME, type: 'transactional' } })
  const [dkim, spf, dmarc, mx] = created.body.dns as [DnsEntry, DnsEntry, DnsEntry, DnsEntry]

  const published: Zone = {
    [dkim.host]: [{ type: 'TXT', data: dkim.value }],
    [NAME]: [
      { type: 'TXT', data: 'google-site-verification=abc' },
      { type: 'TXT', data: spf.value },
    ],
  }
  const stored = async () =>
    t.ctx.db
      .select({
        type: domains.type,
        valid: domains.valid,
        checks: domains.checks,
        checkedAt: domains.checkedAt,
      })
      .from(domains)
      .where(eq(domains.name, NAME))
      .orderBy(domains.type)

  // Each test states the DNS it needs: none leans on what an earlier one published, so any runs alone.
  beforeEach(() => {
    dns.setZone({})
    dns.setMode('answer')
    dns.queries.length = 0
  })

  it('reports nothing valid before the first check', async () => {
    const [row] = await stored()
    assert.equal(row!.checkedAt, null)
    assert.deepEqual(validity(created.body), [undefined, undefined, undefined, undefined])
  })

  it('stays invalid while the name does not exist (NXDOMAIN)', async () => {
    dns.setZone({})
    const res = await t.req('POST', `/domains/${NAME}/verify`)
    assert.equal(res.status, 200)
    assert.equal(res.body.type, 'sending')
    assert.equal(res.body.valid, false)
    assert.deepEqual(validity(res.body), [false, false, false, false])
    for (const row of await stored()) {
      assert.equal(row.valid, false)
      assert.ok(row.checkedAt instanceof Date)
      assert.deepEqual(row.checks, {
        dkim: { valid: false, error: 'ENOTFOUND' },
        spf: { valid: false, error: 'ENOTFOUND' },
        dmarc: { valid: false, error: 'ENOTFOUND' },
        bounce_mx: { valid: false, error: 'ENOTFOUND' },
      })
    }
    // Every lookup went to the local server: the DKIM key, SPF, DMARC and the bounce MX, once each for both variants.
    assert.deepEqual(
      [...dns.queries].sort(),
      [`MX ${mx.host}`, `TXT ${NAME}`, `TXT ${dkim.host}`, `TXT ${dmarc.host}`].sort(),
    )
  })

  it('becomes valid once the DKIM key and SPF are published, for both variants', async () => {
    dns.setZone(published)
    const res = await t.req('POST', `/domains/${NAME}/verify`)
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, {
      id: (await t.req('GET', '/domains')).body.find((d: { type: string }) => d.type === 'sending').id,
      name: NAME,
      type: 'sending',
      valid: true,
      blocked: false,
      dns: [
        { ...dkim, valid: true },
        { ...spf, valid: true },
        { ...dmarc, valid: false },
        { ...mx, valid: false },
      ],
    })
    const rows = await stored()
    assert.deepEqual(
      rows.map((r) => [r.type, r.valid]),
      [
        ['sending', true],
        ['transactional', true],
      ],
    )
    const listed = (await t.req('GET', '/domains')).body
    assert.deepEqual(
      listed.map((d: { type: string; valid: boolean; dns: DnsEntry[] }) => [d.type, d.valid, validity(d)]),
      [
        ['sending', true, [true, true, false, false]],
        ['transactional', true, [true, true, false, false]],
      ],
    )
  })

  it('reports DMARC and the bounce MX once they are published too', async () => {
    dns.setZone(published)
    assert.equal((await t.req('POST', `/domains/${NAME}/verify?type=sending`)).body.valid, true)
    dns.setZone({
      ...published,
      [dmarc.host]: [{ type: 'TXT', data: 'v=DMARC1; p=quarantine; rua=mailto:d@verify.example' }],
      [mx.host]: [{ type: 'MX', exchange: 'MAIL.tidings.test.', preference: 5 }],
    })
    const res = await t.req('POST', `/domains/${NAME}/verify?type=transactional`)
    assert.equal(res.status, 200)
    assert.equal(res.body.type, 'transactional')
    assert.equal(res.body.valid, true)
    assert.deepEqual(validity(res.body), [true, true, true, true])
    // Only the variant asked for was checked: the sending one keeps its last results.
    const listed = (await t.req('GET', '/domains')).body as { type: string; dns: DnsEntry[] }[]
    assert.deepEqual(validity(listed.find((d) => d.type === 'sending')!), [true, true, false, false])
  })

  it('turns invalid again when the DKIM record carries another key', async () => {
    dns.setZone({
      ...published,
      [dkim.host]: [{ type: 'TXT', data: `v=DKIM1; k=rsa; p=${otherPublicKey()}` }],
    })
    const res = await t.req('POST', `/domains/${NAME}/verify`)
    assert.equal(res.status, 200)
    assert.equal(res.body.valid, false)
    assert.deepEqual(validity(res.body), [false, true, false, false])
    for (const row of await stored()) {
      assert.equal(row.valid, false)
      assert.deepEqual(row.checks.dkim, { valid: false, error: 'mismatch' })
    }
  })

  it('accepts the DKIM key folded with whitespace and without the optional tags', async () => {
    const key = dkim.value.replace(/^.*p=/, '')
    const folded = `p=${key.slice(0, 100)} ${key.slice(100, 200)}\t${key.slice(200)}`
    dns.setZone({ ...published, [dkim.host]: [{ type: 'TXT', data: folded }] })
    const res = await t.req('POST', `/domains/${NAME}/verify`)
    assert.equal(res.body.valid, true)
  })

  it('does not count two SPF records (receivers treat that as a permanent error)', async () => {
    dns.setZone({
      ...published,
      [NAME]: [
        { type: 'TXT', data: spf.value },
        { type: 'TXT', data: 'v=spf1 include:other.example -all' },
      ],
    })
    const res = await t.req('POST', `/domains/${NAME}/verify`)
    assert.equal(res.body.valid, false)
    assert.deepEqual(validity(res.body), [true, false, false, false])
    const [row] = await stored()
    assert.deepEqual(row!.checks.spf, { valid: false, error: 'multiple' })
  })

  it('treats SERVFAIL as records not found, not as a failed request', async () => {
    dns.setZone(published)
    dns.setMode('servfail')
    const res = await t.req('POST', `/domains/${NAME}/verify`)
    assert.equal(res.status, 200)
    assert.equal(res.body.valid, false)
    assert.deepEqual(validity(res.body), [false, false, false, false])
    const [row] = await stored()
    assert.deepEqual(row!.checks.dkim, { valid: false, error: 'ESERVFAIL' })
  })

  it('gives up on a server that never answers, after the configured tries, with a time-out per record', async () => {
    dns.setZone(published)
    dns.setMode('drop')
    const res = await t.req('POST', `/domains/${NAME}/verify?type=sending`)
    assert.equal(res.status, 200)
    assert.equal(res.body.valid, false)
    assert.deepEqual(validity(res.body), [false, false, false, false])
    const [row] = await stored()
    for (const check of ['dkim', 'spf', 'dmarc', 'bounce_mx'] as const)
      assert.deepEqual(row!.checks[check], { valid: false, error: 'ETIMEOUT' }, check)
    // Each question was sent DNS_TRIES times (not the resolver's default of four) and then abandoned.
    const asked = new Map<string, number>()
    for (const q of dns.queries) asked.set(q, (asked.get(q) ?? 0) + 1)
    assert.deepEqual(
      [...asked].sort(),
      [`MX ${mx.host}`, `TXT ${NAME}`, `TXT ${dkim.host}`, `TXT ${dmarc.host}`]
        .sort()
        .map((q) => [q, DNS_TRIES]),
    )
  })

  it('answers with the transactional variant when it is the only one held', async () => {
    assert.equal((await t.req('DELETE', `/domains/${NAME}?type=sending`)).status, 200)
    dns.setZone(published)
    const res = await t.req('POST', `/domains/${NAME}/verify`)
    assert.equal(res.status, 200)
    assert.equal(res.body.type, 'transactional')
    assert.equal(res.body.valid, true)
    assert.equal((await t.req('POST', `/domains/${NAME}/verify?type=sending`)).status, 404)
  })

  it('asks the local server, and only about the names of the test domain', async () => {
    dns.setZone(published)
    assert.equal((await t.req('POST', `/domains/${NAME}/verify?type=transactional`)).status, 200)
    assert.ok(dns.queries.length > 0)
    for (const q of dns.queries) assert.match(q, /^(TXT|MX) (.+\.)?verify\.example$/)
  })
})
