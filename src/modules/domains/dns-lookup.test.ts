import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { startDnsServer } from '../../../test/helpers/dns-server.js'
import { checkDnsServers, createDnsLookup } from './dns-lookup.js'

describe('DNS lookups for verification', () => {
  it('accepts IP addresses with ports and refuses anything else at start-up', () => {
    checkDnsServers([])
    checkDnsServers(['127.0.0.1:5353', '[::1]:53', '192.0.2.1'])
    for (const bad of ['dns.example', '127.0.0.1:port', '']) {
      assert.throws(() => checkDnsServers([bad]), /^Error: DNS_SERVERS must be IP addresses/)
    }
  })

  it('joins the character-strings of a long TXT record and asks once per host and type', async () => {
    const dns = await startDnsServer({ 'long.example': [{ type: 'TXT', data: 'x'.repeat(600) }] })
    const lookup = createDnsLookup([dns.address])
    const [a, b] = await Promise.all([lookup.txt('long.example'), lookup.txt('long.example')])
    assert.deepEqual(a, { values: ['x'.repeat(600)] })
    assert.equal(b, a)
    assert.deepEqual(await lookup.mx('long.example'), { values: [], error: 'ENODATA' })
    assert.deepEqual(dns.queries, ['TXT long.example', 'MX long.example'])
  })
})
