import { Resolver } from 'node:dns/promises'

/** Records found at a host, or the DNS error code (ENOTFOUND, ENODATA, ESERVFAIL, ETIMEOUT…) that stood in the way. */
export interface LookupResult<T> {
  values: T[]
  error?: string
}

export interface MxHost {
  exchange: string
  priority: number
}

export interface DnsLookup {
  /** Each TXT record with its character-strings joined, as DKIM, SPF and DMARC read them. */
  txt(host: string): Promise<LookupResult<string>>
  mx(host: string): Promise<LookupResult<MxHost>>
}

/**
 * A dead server must not hold a verify request for the c-ares defaults (5 s × 4 tries per server): one second,
 * doubled on the retry, is enough for any working resolver.
 */
const TIMEOUT_MS = 1000
/** Attempts per question, each sent to every server; exported for the tests that count them. */
export const DNS_TRIES = 2

function newResolver(servers: readonly string[]): Resolver {
  const resolver = new Resolver({ timeout: TIMEOUT_MS, tries: DNS_TRIES })
  if (servers.length > 0) resolver.setServers([...servers])
  return resolver
}

/** Throws at start-up, not at the first verify, when DNS_SERVERS holds something that is not an IP[:port]. */
export function checkDnsServers(servers: readonly string[]): void {
  try {
    newResolver(servers)
  } catch (err) {
    throw new Error(
      `DNS_SERVERS must be IP addresses with optional ports (127.0.0.1:5353, [::1]:53), got "${servers.join(',')}"`,
      { cause: err },
    )
  }
}

function dnsErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

async function attempt<T>(query: () => Promise<T[]>): Promise<LookupResult<T>> {
  try {
    return { values: await query() }
  } catch (err) {
    // A DNS failure is an answer about the record (not there, not reachable), not a failure of the request.
    const code = dnsErrorCode(err)
    if (code === undefined) throw err
    return { values: [], error: code }
  }
}

/**
 * Lookups for one verification. A fresh resolver each time: c-ares keeps a per-channel answer cache, and a person
 * who has just fixed a record expects the next verify to see it. Queries for the same host are made once.
 */
export function createDnsLookup(servers: readonly string[]): DnsLookup {
  const resolver = newResolver(servers)
  const seen = new Map<string, Promise<LookupResult<unknown>>>()
  function once<T>(key: string, query: () => Promise<T[]>): Promise<LookupResult<T>> {
    let pending = seen.get(key)
    if (!pending) {
      pending = attempt(query)
      seen.set(key, pending)
    }
    return pending as Promise<LookupResult<T>>
  }
  return {
    txt: (host) =>
      once(`TXT ${host}`, async () => (await resolver.resolveTxt(host)).map((chunks) => chunks.join(''))),
    mx: (host) => once(`MX ${host}`, () => resolver.resolveMx(host)),
  }
}
