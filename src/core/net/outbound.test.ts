import { after, describe, it } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createOutboundHttp, OutboundError, type Resolver } from './outbound.js'

// A real server on 127.0.0.1 that counts every connection, so a refusal can be shown to have dialled nothing.
let connections = 0
const server = http.createServer((req, res) => {
  const path = req.url ?? '/'
  if (path === '/redirect') res.writeHead(302, { location: '/ok' }).end()
  else if (path === '/big') res.end(Buffer.alloc(1_000_000, 'x'))
  else if (path === '/hang')
    return // never answers
  else {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => res.end(`${req.method} ${path} ${body}`))
  }
})
server.on('connection', () => connections++)
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const port = (server.address() as AddressInfo).port
after(() => {
  server.closeAllConnections()
  server.close()
})

/** A resolver that knows a few names and records every question; nothing reaches real DNS. */
function stubResolver(table: Record<string, string[]>) {
  const asked: string[] = []
  const resolve: Resolver = async (hostname) => {
    asked.push(hostname)
    const addrs = table[hostname]
    if (!addrs) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    return addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
  return { resolve, asked }
}

const base = { timeoutMs: 2000, maxResponseBytes: 10_000 }

async function refusal(promise: Promise<unknown>): Promise<OutboundError> {
  try {
    await promise
  } catch (err) {
    assert.ok(err instanceof OutboundError, String(err))
    return err
  }
  assert.fail('the request was not refused')
}

describe('outbound HTTP with the address rule on', () => {
  const dns = stubResolver({
    'rebind.example': ['127.0.0.1'],
    'mixed.example': ['93.184.216.34', '10.0.0.5'],
    'metadata.example': ['169.254.169.254'],
    'v6.example': ['::ffff:127.0.0.1'],
  })
  const client = createOutboundHttp({ allowPrivateNetwork: false, resolve: dns.resolve })

  it('refuses other schemes, credentials and non-URLs before anything else', async () => {
    for (const url of [
      `ftp://127.0.0.1:${port}/`,
      'file:///etc/passwd',
      `http://user:pw@example.com/`,
      'not a url',
    ]) {
      const err = await refusal(client.request({ ...base, url }))
      assert.equal(err.code, 'invalid_url', url)
    }
  })

  it('refuses IP literals in forbidden ranges without dialling them', async () => {
    const before = connections
    for (const host of [
      '127.0.0.1',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '0x7f.1', // the URL parser makes this 127.0.0.1
      '2130706433', // and this
      '169.254.169.254',
      '10.0.0.1',
      '[fd00:ec2::254]',
      'localhost',
    ]) {
      const err = await refusal(client.request({ ...base, url: `http://${host}:${port}/ok` }))
      assert.equal(err.code, 'forbidden_address', host)
    }
    assert.equal(connections, before)
    assert.deepEqual(dns.asked, [])
  })

  it('judges names on the addresses the socket would dial, and dials nothing when one is forbidden', async () => {
    const before = connections
    for (const name of ['rebind.example', 'mixed.example', 'metadata.example', 'v6.example']) {
      const err = await refusal(client.request({ ...base, url: `http://${name}:${port}/ok` }))
      assert.equal(err.code, 'forbidden_address', name)
      assert.match(err.message, /resolves to a .* address/)
    }
    assert.equal(connections, before)
    // Asked at dial time, once per request: there is no earlier check a second answer could slip past.
    assert.deepEqual(dns.asked, ['rebind.example', 'mixed.example', 'metadata.example', 'v6.example'])
  })

  it('reports an unknown name as a network failure', async () => {
    const err = await refusal(client.request({ ...base, url: 'https://nowhere.example/' }))
    assert.equal(err.code, 'network')
  })
})

describe('outbound HTTP with ALLOW_PRIVATE_NETWORK', () => {
  const dns = stubResolver({ 'receiver.example': ['127.0.0.1'] })
  const client = createOutboundHttp({ allowPrivateNetwork: true, resolve: dns.resolve })

  it('reaches a private address through a name and sends the body', async () => {
    const res = await client.request({
      ...base,
      url: `http://receiver.example:${port}/hook`,
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    })
    assert.equal(res.status, 200)
    assert.equal(res.body.toString(), 'POST /hook {"a":1}')
    assert.equal(res.truncated, false)
  })

  it('still refuses credentials and other schemes', async () => {
    const err = await refusal(client.request({ ...base, url: `http://a:b@127.0.0.1:${port}/` }))
    assert.equal(err.code, 'invalid_url')
  })

  it('hands a redirect back instead of following it', async () => {
    let hits = 0
    const count = () => hits++
    server.on('request', count)
    const res = await client.request({ ...base, url: `http://127.0.0.1:${port}/redirect` })
    server.off('request', count)
    assert.equal(res.status, 302)
    assert.equal(res.headers.location, '/ok')
    assert.equal(hits, 1)
  })

  it('reads no more than maxResponseBytes', async () => {
    const res = await client.request({ ...base, url: `http://127.0.0.1:${port}/big`, maxResponseBytes: 1000 })
    assert.equal(res.status, 200)
    assert.equal(res.body.length, 1000)
    assert.equal(res.truncated, true)
  })

  it('gives up when its time-out elapses, and drops the connection', async (t) => {
    // The request's own clock is mocked: the time-out fires when the test moves time, never by waiting.
    t.mock.timers.enable({ apis: ['setTimeout'] })
    const arrived = new Promise<http.IncomingMessage>((resolve) => {
      const onRequest = (req: http.IncomingMessage) => {
        if (req.url !== '/hang') return
        server.off('request', onRequest)
        resolve(req)
      }
      server.on('request', onRequest)
    })
    let settledWith: OutboundError | undefined
    // Read through a function: TypeScript would keep the narrowing of the first check for the second.
    const outcome = () => settledWith
    const pending = refusal(
      client.request({ ...base, url: `http://127.0.0.1:${port}/hang`, timeoutMs: 30_000 }),
    ).then((err) => (settledWith = err))
    const req = await arrived
    const dropped = new Promise<void>((resolve) => req.socket.once('close', () => resolve()))
    t.mock.timers.tick(29_999)
    await new Promise((r) => setImmediate(r))
    assert.equal(outcome(), undefined, 'still waiting before the time-out')
    t.mock.timers.tick(1)
    await new Promise((r) => setImmediate(r))
    assert.equal(outcome()?.code, 'timeout', 'gave up as the time-out elapsed')
    await pending
    await dropped
  })

  it('stops when its signal aborts', async () => {
    const ac = new AbortController()
    const pending = client.request({ ...base, url: `http://127.0.0.1:${port}/hang`, signal: ac.signal })
    setTimeout(() => ac.abort(), 50)
    const err = await refusal(pending)
    assert.equal(err.code, 'aborted')
  })
})
