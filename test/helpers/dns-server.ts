import dgram from 'node:dgram'
import { after } from 'node:test'
import dnsPacket, { type Answer, type Question } from 'dns-packet'

/** A record the test server holds; TXT data longer than 255 octets is sent as several character-strings. */
export type ZoneRecord = { type: 'TXT'; data: string } | { type: 'MX'; exchange: string; preference?: number }
/** Host name (any case, no trailing dot) → its records. */
export type Zone = Record<string, ZoneRecord[]>

/**
 * `answer`: authoritative answers from the zone (NXDOMAIN for a name not in it, no records for a type it lacks);
 * `servfail`: every query fails with SERVFAIL; `drop`: no reply at all, as a dead server.
 */
export type DnsMode = 'answer' | 'servfail' | 'drop'

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for config.dnsServers. */
  address: string
  port: number
  setZone(zone: Zone): void
  setMode(mode: DnsMode): void
  /** Every question received, as `TYPE name`. */
  queries: string[]
  close(): Promise<void>
}

const RCODE_SERVFAIL = 2
const RCODE_NXDOMAIN = 3
const MAX_CHARACTER_STRING = 255

function txtChunks(data: string): Buffer[] {
  const bytes = Buffer.from(data, 'utf8')
  const chunks: Buffer[] = []
  for (let i = 0; i < bytes.length; i += MAX_CHARACTER_STRING) {
    chunks.push(bytes.subarray(i, i + MAX_CHARACTER_STRING))
  }
  return chunks.length > 0 ? chunks : [Buffer.alloc(0)]
}

function toAnswer(name: string, record: ZoneRecord): Answer {
  // TTL 0: the resolver must never answer a later query from its cache.
  if (record.type === 'TXT') return { type: 'TXT', name, ttl: 0, data: txtChunks(record.data) }
  return {
    type: 'MX',
    name,
    ttl: 0,
    data: { exchange: record.exchange, preference: record.preference ?? 10 },
  }
}

function canonical(name: string): string {
  return name.toLowerCase().replace(/\.$/, '')
}

/**
 * A tiny authoritative DNS server on 127.0.0.1 (UDP, random port), so verification tests never send a query
 * off the machine. Closed automatically after the test file.
 */
export async function startDnsServer(
  initial: Zone = {},
  opts: { autoClose?: boolean } = {},
): Promise<TestDnsServer> {
  const socket = dgram.createSocket('udp4')
  let zone = new Map<string, ZoneRecord[]>()
  let mode: DnsMode = 'answer'
  const queries: string[] = []

  const setZone = (z: Zone) => {
    zone = new Map(Object.entries(z).map(([host, records]) => [canonical(host), records]))
  }
  setZone(initial)

  function reply(query: dnsPacket.DecodedPacket): Buffer {
    const questions: Question[] = query.questions ?? []
    let rcode = 0
    const answers: Answer[] = []
    if (mode === 'servfail') rcode = RCODE_SERVFAIL
    for (const q of mode === 'answer' ? questions : []) {
      const records = zone.get(canonical(q.name))
      if (!records) {
        rcode = RCODE_NXDOMAIN
        continue
      }
      for (const r of records) if (r.type === q.type) answers.push(toAnswer(q.name, r))
    }
    return dnsPacket.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | rcode,
      questions,
      answers,
    })
  }

  socket.on('message', (msg, peer) => {
    let query: dnsPacket.DecodedPacket
    try {
      query = dnsPacket.decode(msg)
    } catch {
      return // not DNS: ignore, as a real server would
    }
    for (const q of query.questions ?? []) queries.push(`${q.type} ${canonical(q.name)}`)
    if (mode === 'drop') return
    socket.send(reply(query), peer.port, peer.address)
  })

  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject)
    socket.bind(0, '127.0.0.1', () => {
      socket.off('error', reject)
      resolve()
    })
  })
  const { port } = socket.address()
  let closed = false
  const server: TestDnsServer = {
    address: `127.0.0.1:${port}`,
    port,
    setZone,
    setMode: (m) => {
      mode = m
    },
    queries,
    close: () =>
      new Promise<void>((resolve) => {
        if (closed) return resolve()
        closed = true
        socket.close(() => resolve())
      }),
  }
  // Benchmarks run outside node:test and close it themselves.
  if (opts.autoClose !== false) after(() => server.close())
  return server
}
