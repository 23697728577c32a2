import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { and, eq } from 'drizzle-orm'
import { startTestApp } from '../../../test/helpers/app.js'
import { startDnsServer } from '../../../test/helpers/dns-server.js'
import { bounceHostFor, findDomainForAddress } from './index.js'
import { domains } from './domains.table.js'

describe('findDomainForAddress and bounceHostFor (for the mail pipeline)', async () => {
  const dns = await startDnsServer()
  const t = await startTestApp({ config: { dnsServers: [dns.address] } })
  const other = await t.createAccount()
  const db = t.ctx.db
  const accountId = t.account.id

  const markValid = (name: string, type: 'sending' | 'transactional') =>
    db
      .update(domains)
      .set({ valid: true })
      .where(and(eq(domains.accountId, accountId), eq(domains.name, name), eq(domains.type, type)))

  await t.req('POST', '/domains', { body: { name: 'pipe.example', type: 'sending' } })
  await t.req('POST', '/domains', { body: { name: 'pipe.example', type: 'transactional' } })
  await t.req('POST', '/domains', { body: { name: 'tx-only.example', type: 'transactional' } })

  it('finds the domain of the address, key and selector included', async () => {
    const row = await findDomainForAddress(db, accountId, 'News@Pipe.Example', ['sending'])
    assert.ok(row)
    assert.equal(row.name, 'pipe.example')
    assert.equal(row.type, 'sending')
    assert.match(row.dkimSelector, /^td\d{6}[0-9a-f]{4}$/)
    assert.match(row.dkimPrivateKey, /^-----BEGIN PRIVATE KEY-----/)
  })

  it('prefers a valid variant, then the order of the types asked for', async () => {
    const types = ['transactional', 'sending'] as const
    assert.equal((await findDomainForAddress(db, accountId, 'a@pipe.example', types))?.type, 'transactional')
    await markValid('pipe.example', 'sending')
    assert.equal((await findDomainForAddress(db, accountId, 'a@pipe.example', types))?.type, 'sending')
    await markValid('pipe.example', 'transactional')
    assert.equal((await findDomainForAddress(db, accountId, 'a@pipe.example', types))?.type, 'transactional')
  })

  it('finds nothing for another type, another domain, a subdomain, another account or a non-address', async () => {
    assert.equal(await findDomainForAddress(db, accountId, 'a@tx-only.example', ['sending']), undefined)
    assert.equal(await findDomainForAddress(db, accountId, 'a@tx-only.example', []), undefined)
    assert.equal(await findDomainForAddress(db, accountId, 'a@elsewhere.example', ['sending']), undefined)
    assert.equal(await findDomainForAddress(db, accountId, 'a@mail.pipe.example', ['sending']), undefined)
    assert.equal(await findDomainForAddress(db, other.id, 'a@pipe.example', ['sending']), undefined)
    assert.equal(await findDomainForAddress(db, accountId, 'pipe.example', ['sending']), undefined)
  })

  it('names the bounce host under the domain', () => {
    assert.equal(bounceHostFor('pipe.example'), 'bounces.pipe.example')
  })
})
